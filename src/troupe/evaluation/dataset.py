"""The labelled routing set: requests and the agent each one should reach."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from itertools import islice, zip_longest
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..topology import ORCHESTRATOR_NAME

KINDS = ("plain", "paraphrase", "typo", "compound", "language")
"""How a request is phrased: plain, a paraphrase, with typos, several tasks in
one (compound), or in another language than English."""

DIRECT = ORCHESTRATOR_NAME
"""The label of a request the orchestrator should answer itself."""
CANNOT = "cannot"
"""The label of a request for something the team has no tool for (a payment, a
booking): the right answer says it cannot be done, and no agent is handed it."""

BUILTIN_DATASET = "routing_eval.jsonl"
"""The development set's file."""
BUILTIN_SETS = {"dev": BUILTIN_DATASET, "test": "routing_test.jsonl"}
"""The sets troupe ships. ``dev`` is the development set: the router's examples,
thresholds and weights are tuned on it, so its score flatters the router.
``test`` is frozen: written apart from the router and never tuned on (a test
pins its digest and checks that none of its requests leaked into the
router's examples or the topology's keywords); its score is the headline."""
DEFAULT_SET = "test"


@dataclass(frozen=True)
class RoutingCase:
    """One labelled request."""

    text: str
    """What the user writes."""
    expected: tuple[str, ...]
    """The agents (or ``orchestrator``) that count as a correct route; the first
    is the request's label in per-agent rows and the confusion matrix."""
    kind: str
    """One of :data:`KINDS`."""
    lang: str
    """Language code of the request (``en``, ``de``, ``es``, ``fr`` ...)."""
    steps: tuple[str, ...] = ()
    """For a compound request, the agent each step needs, in order: the request
    is done only when each of them ran a tool in the turn."""

    @property
    def label(self) -> str:
        """The primary expected agent."""
        return self.expected[0]

    @property
    def routes(self) -> tuple[str, ...]:
        """The routing decisions that are right for this request: a request no
        agent can serve is the orchestrator's to answer (with an honest "cannot")."""
        return (DIRECT,) if self.label == CANNOT else self.expected

    def accepts(self, routed: str | None) -> bool:
        """True when routing to ``routed`` counts as correct."""
        return routed is not None and routed in self.expected


def load_cases(path: str | Path | None = None) -> list[RoutingCase]:
    """A routing set: ``dev`` (the default here, for tuning and benchmarks),
    ``test``, or a JSONL file at ``path``.

    Each line is ``{"text", "expected", "kind", "lang"}`` and, for a compound
    request, ``"steps"``: the agent each step needs. ``expected`` is an agent
    name, ``orchestrator`` (answered directly), ``cannot`` (no agent has the
    tool: an honest refusal is right) or a list of acceptable names.

    Raises:
        ConfigError: naming the file, the line and what to fix.
    """
    name = "dev" if path is None else str(path)
    if name in BUILTIN_SETS:
        source = f"troupe's {name} set ({BUILTIN_SETS[name]})"
        text = (resources.files("troupe.evaluation") / "data" / BUILTIN_SETS[name]).read_text(
            encoding="utf-8"
        )
    else:
        source = name
        try:
            text = Path(name).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"Cannot read routing set {source!r}: {exc.strerror}. Pass 'test', 'dev' or "
                "an existing JSONL file to --dataset."
            ) from None
    cases = [
        _parse_line(line, number, source)
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip()
    ]
    if not cases:
        raise ConfigError(f"Routing set {source!r} has no requests; add one JSON object a line.")
    return cases


def _parse_line(line: str, number: int, source: str) -> RoutingCase:
    where = f"{source}, line {number}"
    try:
        row: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{where} is not valid JSON ({exc.msg}); write one object a line."
        ) from None
    if not isinstance(row, dict):
        raise ConfigError(f"{where} must be a JSON object with text, expected, kind and lang.")
    unknown = sorted(set(row) - {"text", "expected", "kind", "lang", "steps"})
    if unknown:
        raise ConfigError(
            f"{where} has unknown field(s) {', '.join(unknown)}; "
            "use only text, expected, kind, lang and steps."
        )
    text = row.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{where}: 'text' must be a non-empty string (the user's request).")
    expected = _expected(row.get("expected"), where)
    kind = row.get("kind", "plain")
    if kind not in KINDS:
        raise ConfigError(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}.")
    lang = row.get("lang", "en")
    if not isinstance(lang, str) or not lang.strip():
        raise ConfigError(f"{where}: 'lang' must be a language code such as 'en' or 'de'.")
    steps = _steps(row.get("steps", []), where)
    return RoutingCase(text=text, expected=expected, kind=kind, lang=lang.strip(), steps=steps)


def _steps(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(n, str) and n.strip() for n in value):
        raise ConfigError(
            f"{where}: 'steps' must be a list of agent names, one per step "
            f'(e.g. ["operator", "vault"]); got {value!r}.'
        )
    return tuple(n.strip() for n in value)


def _expected(value: Any, where: str) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else value
    if (
        not isinstance(names, list)
        or not names
        or not all(isinstance(n, str) and n.strip() for n in names)
    ):
        raise ConfigError(
            f"{where}: 'expected' must be an agent name, 'orchestrator' for a direct "
            f"answer, or a non-empty list of names; got {value!r}."
        )
    return tuple(n.strip() for n in names)


def spread(cases: Sequence[RoutingCase], limit: int | None) -> list[RoutingCase]:
    """The first ``limit`` cases taken in turn from each label, and within a label
    in turn from each kind, so that a small subset still covers every agent and
    phrasing; all cases, in file order, without a limit."""
    if limit is None or limit >= len(cases):
        return list(cases)
    by_label: dict[str, list[RoutingCase]] = {}
    for case in cases:
        by_label.setdefault(case.label, []).append(case)
    mixed = [_interleave(group, key=lambda c: c.kind) for group in by_label.values()]
    return list(islice(_round_robin(mixed), limit))


def _interleave(
    cases: Sequence[RoutingCase], *, key: Callable[[RoutingCase], str]
) -> list[RoutingCase]:
    groups: dict[str, list[RoutingCase]] = {}
    for case in cases:
        groups.setdefault(key(case), []).append(case)
    return list(_round_robin(list(groups.values())))


def _round_robin(groups: Sequence[Sequence[RoutingCase]]) -> Iterator[RoutingCase]:
    for layer in zip_longest(*groups):
        yield from (case for case in layer if case is not None)
