"""Choosing the router's threshold on a labelled set.

For each threshold the router decides a share of the requests (its
*coverage*: the ones it routes, plus the greetings and general questions
it leaves to the orchestrator) and is right
on some of them (its *precision*). :func:`calibrate` scores a list of
thresholds in one pass over the set, and :func:`choose` takes the one with the
most coverage among those precise enough.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import ConfigError
from .router import RouteDecision, Router

DIRECT = "orchestrator"
"""The label of a request the orchestrator answers itself (a greeting or a
general question)."""
DEFAULT_THRESHOLDS: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(23))


@dataclass(frozen=True)
class CalibrationPoint:
    """How the router does at one threshold."""

    threshold: float
    decided: int
    correct: int
    total: int

    @property
    def coverage(self) -> float:
        """Share of the requests the router decided."""
        return self.decided / self.total if self.total else 0.0

    @property
    def precision(self) -> float:
        """Share of its decisions that were right (1.0 when it decided none)."""
        return self.correct / self.decided if self.decided else 1.0


def _verdict(decision: RouteDecision, threshold: float) -> str | None:
    """What the router decides at ``threshold``: an agent, DIRECT, or None."""
    if decision.kind in ("greeting", "direct"):
        return DIRECT
    if (
        decision.kind == "route"
        and decision.agent
        and decision.confidence >= threshold * decision.bar
    ):
        return decision.agent
    return None


def calibrate(
    router: Router,
    cases: Sequence[tuple[str, Sequence[str]]],
    thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
) -> list[CalibrationPoint]:
    """Coverage and precision of ``router`` on ``cases`` (text, acceptable
    routes) at each threshold; the router itself is left unchanged."""
    if not cases:
        raise ConfigError("Calibration needs at least one labelled request.")
    lowest = min(thresholds)
    decisions = router.with_threshold(lowest).decide_many([text for text, _ in cases])
    points = []
    for threshold in thresholds:
        decided = correct = 0
        for decision, (_, expected) in zip(decisions, cases, strict=True):
            verdict = _verdict(decision, threshold)
            if verdict is not None:
                decided += 1
                correct += verdict in expected
        points.append(CalibrationPoint(threshold, decided, correct, len(cases)))
    return points


def calibration_error(
    router: Router,
    cases: Sequence[tuple[str, Sequence[str]]],
    threshold: float,
    *,
    bins: int = 10,
) -> float:
    """How far the router's confidence is from how often it is right, over the
    requests it routes at ``threshold``: the expected calibration error, with
    each confidence read as a probability (clipped to 0..1) and the routes
    grouped in ``bins`` equal slices of it. 0 means a confidence of 0.8 is
    right 80% of the time; a larger value, that the confidence over- or
    understates it by that much on average."""
    decisions = router.with_threshold(threshold).decide_many([text for text, _ in cases])
    routed = [
        (min(1.0, max(0.0, d.confidence)), d.agent in expected)
        for d, (_, expected) in zip(decisions, cases, strict=True)
        if d.kind == "route" and d.agent
    ]
    if not routed:
        return 0.0
    error = 0.0
    for index in range(bins):
        low, high = index / bins, (index + 1) / bins
        group = [(c, ok) for c, ok in routed if low <= c < high or (index == bins - 1 and c == 1.0)]
        if group:
            confidence = sum(c for c, _ in group) / len(group)
            accuracy = sum(ok for _, ok in group) / len(group)
            error += len(group) / len(routed) * abs(confidence - accuracy)
    return round(error, 4)


def choose(points: Sequence[CalibrationPoint], *, min_precision: float) -> CalibrationPoint:
    """The point with the most coverage whose precision is at least ``min_precision``
    (the highest threshold when none is)."""
    good = [p for p in points if p.precision >= min_precision]
    if not good:
        return max(points, key=lambda p: p.threshold)
    return max(good, key=lambda p: (p.coverage, -p.threshold))


@dataclass(frozen=True)
class HeldOutCheck:
    """A threshold chosen on one half of a set, measured on the other half."""

    held_out: int
    """Which half was held out (0 or 1)."""
    threshold: float
    """Chosen on the other half, as :func:`choose` would."""
    calibration: CalibrationPoint
    """The half the threshold was chosen on, at that threshold."""
    check: CalibrationPoint
    """The held-out half, at that threshold."""


def halves(
    cases: Sequence[tuple[str, Sequence[str]]],
) -> tuple[list[tuple[str, Sequence[str]]], list[tuple[str, Sequence[str]]]]:
    """The cases split in two, every other case of each label in each half,
    so both halves hold every agent in the same proportions."""
    seen: dict[str, int] = {}
    split: tuple[list[tuple[str, Sequence[str]]], list[tuple[str, Sequence[str]]]] = ([], [])
    for text, expected in cases:
        label = expected[0] if expected else ""
        split[seen.get(label, 0) % 2].append((text, expected))
        seen[label] = seen.get(label, 0) + 1
    return split


def held_out_check(
    router: Router,
    cases: Sequence[tuple[str, Sequence[str]]],
    *,
    min_precision: float,
    thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
) -> list[HeldOutCheck]:
    """Both ways round: choose the threshold on one half of ``cases``, then
    measure coverage and precision on the other, which played no part in it."""
    parts = halves(cases)
    checks = []
    for held in (0, 1):
        chosen = choose(calibrate(router, parts[1 - held], thresholds), min_precision=min_precision)
        (check,) = calibrate(router, parts[held], thresholds=[chosen.threshold])
        checks.append(HeldOutCheck(held, chosen.threshold, chosen, check))
    return checks
