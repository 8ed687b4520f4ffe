"""``troupe trust [FILE]``: vouch for a config file, by its path and its digest.

What a trusted file says applies whole, until its bytes change; then it is
untrusted again and the next run shows the change as a diff (see
:mod:`troupe.trust_store` and :mod:`troupe.workspace_config`).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import TroupeError
from ..terminal_text import for_rich
from ..workspace_config import CONFIG_NAME
from .common import console, fail
from .options import DataDirOpt


def trust(
    file: Annotated[
        Path, typer.Argument(help=f"The config file to trust (default: ./{CONFIG_NAME}).")
    ] = Path(CONFIG_NAME),
    data_dir: DataDirOpt = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Trust a changed file without asking.")
    ] = False,
    forget: Annotated[
        bool, typer.Option("--forget", help="Stop trusting the file instead.")
    ] = False,
) -> None:
    """Trust a config file as it is now: every setting in it applies, until it changes."""
    from ..settings import needs_trust, trust_store

    try:
        store = trust_store(data_dir)
        if forget:
            dropped = store.forget(file)
            said = "no longer trusted" if dropped else "was not trusted"
            console.print(f"{for_rich(file)}: {said}")
            return
        try:
            content = file.read_bytes()
        except OSError as exc:
            raise TroupeError(
                f"cannot read {str(file)!r}: {exc.strerror}; give the path of a config file"
            ) from None
        fields = needs_trust(file, content)
        check = store.check(file, content)
    except TroupeError as exc:
        raise fail(exc) from None
    digest = hashlib.sha256(content).hexdigest()[:16]
    if check.trusted:
        console.print(f"{for_rich(file)} is already trusted as it is (sha256 {digest}…)")
        return
    if check.changed:
        console.print(f"[yellow]{for_rich(file)} changed since you trusted it:[/]")
        console.print(for_rich(check.shown_diff(limit=200)), soft_wrap=True, highlight=False)
        if not yes and sys.stdin.isatty():
            answer = console.input("trust it as it is now? " + "\\[y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                console.print("not trusted")
                raise typer.Exit(code=1)
    store.trust(file, content)
    enabled = ", ".join(fields) if fields else "nothing beyond its safe settings"
    console.print(
        f"trusted {for_rich(file.resolve())} (sha256 {digest}…); now it also sets: "
        f"{for_rich(enabled)}",
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    """Add ``troupe trust`` to ``app``."""
    app.command()(trust)
