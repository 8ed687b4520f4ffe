"""What one routing decision costs, alone and in the batches the router forms.

Decides the development set's requests with the router of troupe's default
tree (the bundled sentence encoder, one BLAS thread) in batches of 1, 4, 16
and 32, and reports the CPU time (``time.process_time``) per decision and how
the decisions compare with those made one at a time. Prints a table and
writes JSON.

    python bench/router_batch.py
    python bench/router_batch.py --repeat 5 --out /tmp/router_batch.json
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from troupe import Config, build_agent_tree, builtin_tools
from troupe.evaluation.dataset import load_cases
from troupe.routing.router import RouteDecision, Router
from troupe_bench.results import write_json

DEFAULT_OUT = Path(__file__).parent / "results" / "router_batch.json"
BATCHES = (1, 4, 16, 32)


async def default_router(workspace: Path) -> Router:
    """The router troupe builds for its default tree over the built-in tools."""
    tools = builtin_tools(workspace=workspace, data_dir=workspace / "data")
    root = build_agent_tree(Config(tools=tools, model="offline", router="auto"))
    fast = getattr(root, "troupe_router", None)
    if fast is None:
        raise SystemExit("the default tree has no router (router: off?)")
    router: Router = await fast.router()
    return router


def cpu_per_decision(router: Router, texts: list[str], batch: int, repeat: int) -> float:
    """Mean CPU seconds per decision when ``texts`` are decided ``batch`` at a time."""
    start = time.process_time()
    for _ in range(repeat):
        for i in range(0, len(texts), batch):
            router.decide_many(texts[i : i + batch])
    return (time.process_time() - start) / (repeat * len(texts))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="Passes over the requests.")
    parser.add_argument("--limit", type=int, default=128, help="Requests from the dev set.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="Where to write JSON.")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.limit < 1:
        parser.error("--repeat and --limit must be at least 1")
    texts = [case.text for case in load_cases("dev")][: args.limit]
    with tempfile.TemporaryDirectory(prefix="troupe-router-batch-") as tmp:
        router = asyncio.run(default_router(Path(tmp)))
        router.decide_many(texts[:2])  # the encoder's load and the phrase vectors
        alone = [router.decide(t) for t in texts]
        rows: list[dict[str, Any]] = []
        for batch in BATCHES:
            decided: list[RouteDecision] = []
            for i in range(0, len(texts), batch):
                decided += router.decide_many(texts[i : i + batch])
            same = sum(
                (a.kind, a.agent) == (b.kind, b.agent) for a, b in zip(alone, decided, strict=True)
            )
            cpu = cpu_per_decision(router, texts, batch, args.repeat)
            rows.append({"batch": batch, "cpu_ms_per_decision": round(cpu * 1000, 2),
                         "same_decision_as_alone": f"{same}/{len(texts)}"})  # fmt: skip
    print("batch | CPU ms per decision | same decision as alone")
    print("------+---------------------+-----------------------")
    for row in rows:
        print(
            f"{row['batch']:>5} | {row['cpu_ms_per_decision']:>19.2f} | "
            f"{row['same_decision_as_alone']:>22}"
        )
    payload = {
        "requests": len(texts),
        "repeat": args.repeat,
        "rows": rows,
        "python": platform.python_version(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(payload, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
