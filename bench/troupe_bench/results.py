"""A benchmark's output: one aligned plain-text table, and its JSON file.

Every benchmark (``troupe bench ...`` and the scripts in ``bench/``) prints
its figures with :func:`text_table` and keeps them with :func:`write_json`,
so the docs quote tables of one shape and results of one format.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def text_table(head: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns padded to their widest cell, `` | `` between them, a rule under the head."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(head)]

    def line(row: Sequence[str]) -> str:
        return " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()

    return "\n".join([line(head), "-+-".join("-" * w for w in widths), *map(line, cells)])


def write_json(result: dict[str, Any], out: Path, *, measures: Sequence[str] | None = None) -> Path:
    """Write ``result`` to ``out`` (indented, one trailing newline), creating its
    folder, led by the commit it was produced at (``+dirty`` when the files it
    measures, troupe's code and the benchmark kit by default, differed from it)
    and the paths whose changes make it stale; the docs name
    that commit wherever they quote the figures (tests/test_quoted_figures.py)."""
    from troupe.evaluation.report import CODE_PATHS, source_commit

    paths = CODE_PATHS if measures is None else measures
    payload = {"commit": source_commit(paths=paths), "measures": list(paths), **result}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out
