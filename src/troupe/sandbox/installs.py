"""What a server program needs to see to start: its installation, found from its command line.

An MCP stdio server runs in the jail like a command, but it is a program
installed somewhere (a virtual environment, ``node_modules``, a uv or npm
cache) that the system directories do not cover. :func:`install_roots` names
those places so the jail can show them read-only: the folder the program is
installed in (the virtual environment holding ``bin/python``, the folder
holding ``node_modules``), the interpreter its ``#!`` line names, the base
Python of a virtual environment, and files and folders named in its
arguments (a script's folder, which holds the modules it imports);
:func:`package_caches` names the caches uvx and npx run from. A home folder
or ``/`` is never shown whole: only the file itself is.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

CACHE_DIRS = (".cache/uv", ".local/share/uv", ".npm", ".cache/node", ".local/bin")
"""Package caches under the home folder that uvx, npx and pipx run servers from."""
_SYSTEM = (Path("/usr"), Path("/bin"), Path("/sbin"), Path("/lib"), Path("/lib64"), Path("/etc"))
_MAX_SHEBANG = 256


def install_roots(
    command: str, args: Sequence[str] = (), env: Mapping[str, str] = {}
) -> list[Path]:
    """Directories and files a server started as ``command args`` reads to run.

    ``env`` is the server's environment, whose ``PATH`` finds ``command``
    (without one, the system's default search path).
    """
    search = env.get("PATH", os.defpath)
    found = shutil.which(command, path=search)
    roots: list[Path] = []
    if found is not None:
        program = Path(os.path.abspath(found))
        roots += _roots_of(program)
        interpreter = _shebang(program.resolve())
        if interpreter is not None:
            located = shutil.which(interpreter, path=search) if "/" not in interpreter else None
            roots += _roots_of(Path(located or interpreter))
    for arg in args:
        path = Path(arg).expanduser()
        if arg.startswith("-") or not path.is_absolute() or not path.exists():
            continue
        if path.is_file():
            # A script's folder holds the modules it imports (server.py beside
            # helpers.py); where that folder may not be shown, the file alone.
            script = path.resolve()
            roots.append(script.parent if _showable(script.parent) else script)
        else:
            roots.append(path)
    return _outermost(r for r in roots if _showable(r))


def package_caches() -> list[Path]:
    """The caches of :data:`CACHE_DIRS` that exist for this user."""
    home = Path.home()
    return [home / name for name in CACHE_DIRS if (home / name).is_dir()]


def _roots_of(program: Path) -> list[Path]:
    """The installation ``program`` belongs to, before and after links are resolved."""
    out = []
    for path in dict.fromkeys((program, program.resolve())):
        out.append(_installation(path))
        venv = next((p for p in path.parents if (p / "pyvenv.cfg").is_file()), None)
        if venv is not None:
            out += _base_python(venv)
    return out


def _installation(path: Path) -> Path:
    """The folder a program is installed in: a virtual environment, a node
    project (the folder holding ``node_modules``), else the folder of the file."""
    for parent in path.parents:
        if (parent / "pyvenv.cfg").is_file():
            return parent
        if parent.name == "node_modules":
            return parent.parent
    if path.parent.name == "bin" and (path.parent.parent / "lib").is_dir():
        return path.parent.parent  # a prefix such as ~/.pyenv/versions/3.11.9
    return path.parent


def _base_python(venv: Path) -> list[Path]:
    """The installation of the Python a virtual environment was made from."""
    try:
        lines = (venv / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            home = Path(value.strip())
            return [home.parent if home.name == "bin" else home]
    return []


def _shebang(program: Path) -> str | None:
    """The interpreter a script's ``#!`` line runs (``env`` resolved), else None."""
    try:
        with program.open("rb") as handle:
            first = handle.read(_MAX_SHEBANG).split(b"\n", 1)[0]
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env":
        rest = [w for w in words[1:] if not w.startswith("-")]
        return rest[0] if rest else None
    return words[0]


def _showable(path: Path) -> bool:
    """False for ``/``, a home folder or anything holding one, and the system dirs."""
    if path == Path("/") or any(path == s or s in path.parents for s in _SYSTEM):
        return False
    home = Path.home()
    return path != home and path not in home.parents and path.parent != Path("/home")


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """``paths`` without duplicates and without those inside another one."""
    unique = sorted(set(paths), key=lambda p: len(p.parts))
    kept: list[Path] = []
    for path in unique:
        if not any(k == path or k in path.parents for k in kept):
            kept.append(path)
    return kept
