"""troupe's packages import one way: no circles between them, and the layer contract bites.

The contract is the ``[tool.importlinter]`` section of ``pyproject.toml``; the
map and why it falls this way are in ``docs/architecture.md``. The circle check
reads the source with ``ast`` (lazy imports inside functions count, imports
under ``if TYPE_CHECKING:`` do not), so it holds without import-linter too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fakes.import_graph import cycles, graph, packages

ROOT = Path(__file__).resolve().parents[2]

# `lint-imports`, run by this interpreter (the venv's import-linter) without its cache.
_LINT_IMPORTS = (
    "import sys; from importlinter.cli import lint_imports_command; "
    "sys.exit(lint_imports_command())"
)


def test_no_two_packages_import_each_other_even_through_others() -> None:
    found = cycles(packages(graph()))

    assert found == [], (
        "packages that import each other (move the piece they share into a lower layer, "
        "see docs/architecture.md):\n" + "\n".join(" <-> ".join(group) for group in found)
    )


def test_the_package_circle_check_joins_each_module_into_its_top_level_package() -> None:
    modules = {
        "troupe.low.store": {"troupe.high.events"},
        "troupe.high.app": {"troupe.low.store"},
        "troupe.high.events": set(),
        "troupe.base": set(),
    }

    assert packages(modules) == {
        "troupe.low": {"troupe.high"},
        "troupe.high": {"troupe.low"},
        "troupe.base": set(),
    }
    assert cycles(packages(modules)) == [["troupe.high", "troupe.low"]]


def _lint_imports(project: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on ``project`` (its pyproject.toml, its src/troupe)."""
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    return subprocess.run(
        [sys.executable, "-c", _LINT_IMPORTS, "--no-cache"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _copy_of_the_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(
        ROOT / "src" / "troupe",
        project / "src" / "troupe",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copy(ROOT / "pyproject.toml", project / "pyproject.toml")
    return project


def test_the_layer_contract_holds_on_the_source() -> None:
    done = _lint_imports(ROOT)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


IMPORTS_AGAINST_THE_MAP = {
    "a lazy import inside a function": (
        "errors.py",
        "\n\ndef _upward() -> object:\n"
        "    from .runtime.assistant import Assistant\n\n"
        "    return Assistant\n",
        "troupe.errors -> troupe.runtime.assistant",
    ),
    "the store reading the runtime's events again": (
        "stores/sessions.py",
        "\nfrom ..runtime.events import steps as _steps  # noqa: E402\n",
        "troupe.stores.sessions -> troupe.runtime.events",
    ),
    "the tree importing the runtime's app": (
        "tree.py",
        "\nfrom .runtime import app as _app  # noqa: E402\n",
        "troupe.tree -> troupe.runtime.app",
    ),
    "one built-in role importing another": (
        "builtins/navigator.py",
        "\nfrom .vault import VaultTools as _VaultTools  # noqa: E402\n",
        "troupe.builtins.navigator -> troupe.builtins.vault",
    ),
}


@pytest.mark.parametrize("case", sorted(IMPORTS_AGAINST_THE_MAP))
def test_an_import_against_the_map_breaks_a_contract(tmp_path: Path, case: str) -> None:
    module, added, shown = IMPORTS_AGAINST_THE_MAP[case]
    project = _copy_of_the_project(tmp_path)
    with (project / "src" / "troupe" / module).open("a", encoding="utf-8") as source:
        source.write(added)

    done = _lint_imports(project)

    assert done.returncode != 0, done.stdout
    assert "BROKEN" in done.stdout
    assert shown in done.stdout


def test_an_upward_import_only_for_type_checking_is_allowed(tmp_path: Path) -> None:
    project = _copy_of_the_project(tmp_path)
    with (project / "src" / "troupe" / "errors.py").open("a", encoding="utf-8") as source:
        source.write(
            "\nfrom typing import TYPE_CHECKING  # noqa: E402\n\n"
            "if TYPE_CHECKING:\n    from .runtime.assistant import Assistant\n"
        )

    done = _lint_imports(project)

    assert done.returncode == 0, done.stdout + done.stderr


def test_a_package_left_out_of_the_layer_map_breaks_the_contract(tmp_path: Path) -> None:
    project = _copy_of_the_project(tmp_path)
    (project / "src" / "troupe" / "unplaced.py").write_text('"""Nobody said where."""\n')

    done = _lint_imports(project)

    assert done.returncode != 0, done.stdout
    assert "troupe.unplaced" in done.stdout
