"""The environment is read in few places: Settings, and what sits below it by design."""

from __future__ import annotations

import ast
from pathlib import Path

import troupe

PACKAGE = Path(troupe.__file__).parent
MAX_READERS = 3
OS_ENVIRONMENT = frozenset({"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"})
"""The names of ``os`` that read or change the process environment."""


def touches_the_environment(source: str) -> bool:
    """True when ``source`` uses ``os.environ``, ``os.getenv`` and the like, under any
    alias of ``os`` (``import os as _os``) or imported by name (``from os import environ``)."""
    tree = ast.parse(source)
    aliases = {"os", "posix"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname for a in node.names if a.name in ("os", "posix") and a.asname}
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module in ("os", "posix")
            and any(a.name in OS_ENVIRONMENT for a in node.names)
        ):
            return True
    return any(
        isinstance(node, ast.Attribute)
        and node.attr in OS_ENVIRONMENT
        and isinstance(node.value, ast.Name)
        and node.value.id in aliases
        for node in ast.walk(tree)
    )


def environment_readers() -> list[str]:
    """The modules of the installed package that touch the process environment."""
    return sorted(
        ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for path in PACKAGE.rglob("*.py")
        if touches_the_environment(path.read_text(encoding="utf-8"))
    )


def test_at_most_three_modules_read_the_environment_settings_among_them() -> None:
    readers = environment_readers()

    assert len(readers) <= MAX_READERS, (
        f"{len(readers)} modules touch os.environ/os.getenv: {', '.join(readers)}. Read a "
        "variable in troupe.settings (Settings.environ) and pass the value down."
    )
    assert "troupe.settings" in readers


def test_the_check_sees_every_spelling_of_an_environment_read() -> None:
    seen = [
        "import os\nos.environ.get('X')",
        "import os as _os\n_os.environ.setdefault('X', '1')",
        "import os\nos.getenv('X')",
        "from os import environ\n",
        "from os import getenv as g\n",
        "import os\nos.putenv('X', '1')",
    ]
    unseen = ["import os\nos.path.join('a')", "environ = {}\nenviron.get('X')"]

    assert all(touches_the_environment(text) for text in seen)
    assert not any(touches_the_environment(text) for text in unseen)


def variables_troupe_names() -> set[str]:
    """The values of every ``*_ENV`` constant in troupe (``KEY_ENV = "TROUPE_SECRET_KEY"``)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.endswith("_ENV")
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                found.add(node.value.value)
    return found


def test_the_configuration_page_lists_every_variable_troupe_reads() -> None:
    page = (PACKAGE.parents[1] / "docs" / "configuration.md").read_text(encoding="utf-8")
    table = page.split("### Environment variables", 1)[1].split("\n## ", 1)[0]
    named = variables_troupe_names()

    assert {"TROUPE_SECRET_KEY", "TROUPE_CHROMIUM", "TROUPE_CONFIG"} <= named
    missing = sorted(name for name in named if f"`{name}`" not in table)
    assert not missing, f"add these to the table in docs/configuration.md: {missing}"
