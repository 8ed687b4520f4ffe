"""The architecture page names every package and module of ``src/troupe``, and only those."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "troupe"
PAGE = ROOT / "docs" / "architecture.md"
ROW = re.compile(r"^\| `([A-Za-z_][\w]*(?:\.py|/))` \|", re.MULTILINE)


def _what_exists() -> set[str]:
    names = {f"{p.name}/" for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    names |= {p.name for p in PACKAGE.glob("*.py")}
    return names


def _what_the_page_names() -> set[str]:
    section = PAGE.read_text(encoding="utf-8").split("## Packages and layers", 1)[1]
    section = section.split("\n## ", 1)[0]
    return set(ROW.findall(section))


def test_the_architecture_page_names_every_package_and_module() -> None:
    missing = sorted(_what_exists() - _what_the_page_names())
    assert not missing, f"add these to the table in docs/architecture.md: {missing}"


def test_the_architecture_page_names_nothing_that_is_gone() -> None:
    gone = sorted(_what_the_page_names() - _what_exists())
    assert not gone, f"docs/architecture.md names what src/troupe no longer has: {gone}"


def test_the_readme_stays_short_and_points_at_the_docs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).is_file(), f"README links to a missing page: {link}"
