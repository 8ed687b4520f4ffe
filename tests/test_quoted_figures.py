"""Every figure the README and the docs quote from ``bench/results/*.json`` is
in that JSON, names the commit it was measured at, and says so when the code
it measures has changed since.

A quote is marked in the Markdown, invisible once rendered:

    <!-- figures: bench/results/faults.json -->
    Measured at `1a2b3c4` ...
    ...a fenced table, a Markdown table, or prose with the figures in **bold**...
    <!-- /figures -->

Checked: each number of a table's rows (below its rule) and each bold number
of its prose is one of the JSON's numbers, as shown (rounded; a share may be
shown as a percentage); the quote says "measured at `<commit>`" with the
JSON's commit; and it says "code changed since" exactly when a commit after
that one changed a path the result measures (the JSON's ``measures``), or the
run was made on uncommitted code (``+dirty``).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from troupe.evaluation.report import CODE_PATHS, source_commit

ROOT = Path(__file__).parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
QUOTE = re.compile(
    r"<!-- figures: (?P<file>bench/results/[\w.-]+\.json) -->(?P<body>.*?)<!-- /figures -->",
    re.S,
)
RULE = re.compile(r"^\s*(?:[-+|:\s]{3,}|[━┡╇┿─├┼┤╞╪╡═]+[━┡╇┿─├┼┤╞╪╡═\s]*)$")
NUMBER = re.compile(r"(?<![\w.\-/])-?\d+(?:\.\d+)?(?![\w.])|(?<=/)\d+(?![\w.])")
BOLD = re.compile(r"\*\*([^*]+)\*\*")
STALE = "code changed since"
QUOTED_IN = {
    "README.md": {"eval.json", "load.json"},
    "benchmarks.md": {
        "faults.json",
        "overhead.json",
        "prompt.json",
        "load.json",
        "router_batch.json",
        "eval.json",
        "cli_startup.json",
    },
    "routing.md": {"router.json"},
}
"""Results each page must quote inside markers (more may be quoted)."""


def _quotes() -> Iterator[tuple[str, str, str]]:
    for doc in DOCS:
        for match in QUOTE.finditer(doc.read_text(encoding="utf-8")):
            yield doc.name, match.group("file"), match.group("body")


def _numbers(value: Any) -> Iterator[float]:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield float(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _numbers(item)


def _shown(body: str) -> list[str]:
    """The figures of a quote: table rows below their rule, bold prose numbers."""
    shown: list[str] = []
    below_rule = False
    fenced = False
    for line in body.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced, below_rule = not fenced, False
            continue
        if "measured at" in stripped.lower():
            continue
        if RULE.match(line) and (fenced or stripped.startswith("|")):
            below_rule = True
            continue
        in_table = fenced or stripped.startswith("|")
        if in_table and below_rule:
            shown += NUMBER.findall(line)
        elif not in_table:
            below_rule = False
            for bold in BOLD.findall(line):
                shown += NUMBER.findall(bold)
    return shown


def _held(shown: str, numbers: list[float]) -> bool:
    value = float(shown)
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    half = 0.5 * 10**-decimals + 1e-9
    return any(
        math.isclose(n * scale, value, abs_tol=half)
        for n in numbers
        for scale in (1, 100, 0.01, 1000, 0.001)
    )


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _stale(data: dict[str, Any]) -> bool:
    commit = str(data["commit"])
    if commit.endswith("+dirty"):
        return True
    measures = data.get("measures") or CODE_PATHS  # troupe eval's reports name none
    return bool(_git("log", "--format=%H", f"{commit}..HEAD", "--", *measures))


QUOTES = list(_quotes())


@pytest.mark.parametrize(("doc", "file", "body"), QUOTES, ids=[f"{d}:{f}" for d, f, _ in QUOTES])
def test_a_quoted_figure_is_in_its_json_and_names_its_commit(
    doc: str, file: str, body: str
) -> None:
    data = json.loads((ROOT / file).read_text(encoding="utf-8"))
    assert data.get("commit"), f"{file} records no commit: re-run its benchmark"
    numbers = list(_numbers(data))
    shown = _shown(body)
    assert shown, f"{doc} quotes no figure of {file} between its markers"
    missing = [s for s in shown if not _held(s, numbers)]
    assert not missing, f"{doc} quotes {missing} that {file} does not hold"
    short = str(data["commit"])[:7]
    prose = " ".join(body.split()).lower()  # Markdown wraps lines anywhere
    assert f"measured at `{short}`" in prose, f"{doc} must say 'measured at `{short}`'"
    if _stale(data):
        assert STALE in prose, f"{doc}: the code {file} measures changed since {short}; say so"
    else:
        assert STALE not in prose, f"{doc} calls {file} stale, but nothing it measures changed"


@pytest.mark.parametrize("doc", sorted(QUOTED_IN))
def test_each_page_quotes_its_results_between_markers(doc: str) -> None:
    quoted = {Path(file).name for name, file, _ in QUOTES if name == doc}
    assert QUOTED_IN[doc] <= quoted, f"{doc} quotes these unmarked: {QUOTED_IN[doc] - quoted}"


def test_the_checker_finds_table_rows_and_bold_figures_only() -> None:
    body = (
        "Measured at `abc1234`, 2 CPUs.\n```text\nname | a | b\n-----+---+---\n"
        "x    | 1.5 | 20\n```\nprose 7 and **98.2%** of 55\n| k | v |\n|---|---|\n| r | 3 |\n"
    )

    assert _shown(body) == ["1.5", "20", "98.2", "3"]
    assert _held("98.2", [0.9821]) and _held("20", [20.0]) and not _held("1.5", [1.7])


def test_a_result_just_written_does_not_make_the_next_run_dirty(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    (tmp_path / "src/troupe").mkdir(parents=True)
    (tmp_path / "bench/results").mkdir(parents=True)
    (tmp_path / "src/troupe/code.py").write_text("x = 1\n")
    (tmp_path / "bench/results/eval.json").write_text("{}\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    (tmp_path / "bench/results/eval.json").write_text('{"commit": "a"}\n')

    assert source_commit(tmp_path) is not None
    assert not str(source_commit(tmp_path)).endswith("+dirty")
    (tmp_path / "src/troupe/code.py").write_text("x = 2\n")
    assert str(source_commit(tmp_path)).endswith("+dirty")
