"""``troupe secrets``: manage the vault's secrets without the value passing a model."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from ..errors import TroupeError
from ..terminal_text import for_rich
from .options import ConfigOpt, DataDirOpt, ListJsonOpt
from .tables import Column, fitted_table

if TYPE_CHECKING:
    from ..settings import Settings
    from ..stores.vault import SecretStore

secrets_app = typer.Typer(
    rich_markup_mode=None,
    help="The vault's secrets. Values typed here never reach a model.",
    no_args_is_help=True,
)
console = Console(highlight=False)


def _vault(config: Path | None, data_dir: Path | None) -> SecretStore:
    from ..settings import load_settings

    return _vault_of(load_settings(config_path=config, data_dir=data_dir))


def _vault_of(settings: Settings) -> SecretStore:
    from ..stores.vault import SecretStore

    return SecretStore(
        settings.data_dir,
        database=settings.state_database,
        key_file=settings.vault.key_file,
        environ=settings.environ,
    )


def _fail(message: str) -> typer.Exit:
    console.print(f"[bold red]error:[/] {for_rich(message)}")
    return typer.Exit(code=2)


@secrets_app.command("set")
def set_secret(
    name: Annotated[str, typer.Argument(help="Secret name, e.g. GITHUB_TOKEN.")],
    from_env: Annotated[
        str | None, typer.Option("--from-env", help="Read the value from this variable.")
    ] = None,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Store a secret; the value is asked for without echo (or read from --from-env)."""
    from ..settings import load_settings
    from ..stores.vault import SECRET_NAME

    if not SECRET_NAME.match(name):
        raise _fail(
            f"secret name {name!r} is not allowed; use 1-64 letters, digits, '_', '-' or '.', "
            "starting with a letter or '_' (e.g. GITHUB_TOKEN)"
        )
    try:
        settings = load_settings(config_path=config, data_dir=data_dir)
    except TroupeError as exc:
        raise _fail(str(exc)) from None
    if from_env is not None:
        value = settings.environ.get(from_env)
        if value is None:
            raise _fail(f"environment variable {from_env!r} is not set; export it first")
    elif sys.stdin.isatty():
        value = typer.prompt(f"value of {name}", hide_input=True, confirmation_prompt=True)
    else:
        value = sys.stdin.read().rstrip("\n")
    if not value:
        raise _fail("the value is empty; nothing was stored")
    try:
        replaced = _vault_of(settings).set(name, value)
    except TroupeError as exc:
        raise _fail(str(exc)) from None
    verb = "replaced" if replaced else "stored"
    console.print(for_rich(f"{verb} {name}; the model refers to it as {{{{secret:{name}}}}}"))


@secrets_app.command("list")
def list_secrets(
    json_output: ListJsonOpt = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Secret names and dates (never values)."""
    try:
        rows = _vault(config, data_dir).describe()
    except TroupeError as exc:
        raise _fail(str(exc)) from None
    if json_output:
        print(json.dumps(rows, indent=2))
        return
    if not rows:
        console.print("No secrets stored yet: `troupe secrets set NAME`.")
        return
    cells = [[row["name"], str(row["updated_at"]), row["reference"]] for row in rows]
    console.print(fitted_table(SECRET_COLUMNS, cells, console.width))


SECRET_COLUMNS = (
    Column("name", worth=10, cut=True, min_width=16),
    Column("updated", worth=8),
    Column("reference", worth=5, cut=True, min_width=16),
)
"""``secrets list``'s columns: the reference is the name in braces, so it goes first."""


@secrets_app.command("delete")
def delete_secret(
    name: Annotated[str, typer.Argument(help="Secret to delete.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Delete a secret (asks first unless --yes)."""
    try:
        vault = _vault(config, data_dir)
        vault.require(name)  # no question about a secret that is not there
        if not yes and not typer.confirm(f"Delete secret {name}?", default=False):
            console.print("kept")
            raise typer.Exit(code=1)
        vault.delete(name)
    except TroupeError as exc:
        raise _fail(str(exc)) from None
    console.print(for_rich(f"deleted {name}"))
