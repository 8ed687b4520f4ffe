"""``troupe sessions list|show|delete``: look into the session store."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.console import Console

from ..errors import InvalidRequestError
from ..terminal_text import for_rich, json_text, visible
from .common import console, fail, quiet_logs
from .options import ConfigOpt, DataDirOpt, ListJsonOpt
from .tables import Column, fitted_table

if TYPE_CHECKING:
    from google.adk.sessions.base_session_service import BaseSessionService
    from google.adk.sessions.session import Session

    from ..runtime.events import Line

T = TypeVar("T")

sessions_app = typer.Typer(
    rich_markup_mode=None, help="List, show and delete stored conversations.", no_args_is_help=True
)

UserOpt = Annotated[str | None, typer.Option("--user", "-u", help="Only this user's sessions.")]
StoreOpt = Annotated[
    str | None,
    typer.Option("--session-store", help="sqlite:///..., postgresql+asyncpg://..."),
]


def register(app: typer.Typer) -> None:
    """Add the ``sessions`` command group to ``app``."""

    @sessions_app.command("list")
    def list_(
        user: UserOpt = None,
        limit: Annotated[
            int, typer.Option("--limit", "-n", min=1, help="Show the N most recently active.")
        ] = 50,
        json_output: ListJsonOpt = False,
        config: ConfigOpt = None,
        data_dir: DataDirOpt = None,
        session_store: StoreOpt = None,
    ) -> None:
        """List stored sessions, the most recently active last."""
        found = _with_store(config, data_dir, session_store, lambda s: _list(s, user, limit))
        _print_list(found, _last_outcomes(config, data_dir, found), json_output)

    @sessions_app.command()
    def show(
        session_id: Annotated[str, typer.Argument(help="The session to print.")],
        user: UserOpt = None,
        json_output: ListJsonOpt = False,
        config: ConfigOpt = None,
        data_dir: DataDirOpt = None,
        session_store: StoreOpt = None,
    ) -> None:
        """Print a conversation: who said what, transfers and tool calls."""
        session = _with_store(config, data_dir, session_store, lambda s: _get(s, session_id, user))
        _print_conversation(session, json_output)

    @sessions_app.command()
    def delete(
        session_id: Annotated[str, typer.Argument(help="The session to delete.")],
        user: UserOpt = None,
        yes: Annotated[
            bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")
        ] = False,
        config: ConfigOpt = None,
        data_dir: DataDirOpt = None,
        session_store: StoreOpt = None,
    ) -> None:
        """Delete a stored session (asks first unless --yes)."""

        async def run(service: BaseSessionService) -> str:
            from ..runtime.assistant import DEFAULT_APP_NAME

            session = await _get(service, session_id, user)
            count = len(session.events)
            if not yes and not typer.confirm(
                f"Delete session {session.id!r} of user {session.user_id!r} ({count} events)?",
                default=False,
            ):
                return "kept"
            await service.delete_session(
                app_name=DEFAULT_APP_NAME, user_id=session.user_id, session_id=session.id
            )
            return "deleted"

        outcome = _with_store(config, data_dir, session_store, run)
        _console().print(for_rich(f"session {session_id} {outcome}"))
        if outcome == "kept":
            raise typer.Exit(code=1)

    app.add_typer(sessions_app, name="sessions")


def _console() -> Console:
    return console


def _with_store(
    config: Path | None,
    data_dir: Path | None,
    store: str | None,
    action: Callable[[BaseSessionService], Awaitable[T]],
) -> T:
    from ..errors import TroupeError
    from ..settings import load_settings
    from ..stores.sessions import close_session_store

    quiet_logs(False)

    async def run() -> T:
        service = settings.open_session_store()
        try:
            return await action(service)
        finally:
            await close_session_store(service)

    try:
        settings = load_settings(config_path=config, data_dir=data_dir, session_store=store)
        return asyncio.run(run())
    except TroupeError as exc:
        raise fail(exc) from None


async def _list(service: BaseSessionService, user: str | None, limit: int) -> list[Session]:
    from ..runtime.assistant import DEFAULT_APP_NAME

    listed = await service.list_sessions(app_name=DEFAULT_APP_NAME, user_id=user)
    # ADK lists the least recently active first; only the newest are loaded in full.
    recent = sorted(listed.sessions, key=lambda s: s.last_update_time)[-limit:]
    full = []
    for item in recent:
        session = await service.get_session(
            app_name=DEFAULT_APP_NAME, user_id=item.user_id, session_id=item.id
        )
        full.append(session or item)
    return full


async def _get(service: BaseSessionService, session_id: str, user: str | None) -> Session:
    from ..runtime.assistant import DEFAULT_APP_NAME

    if user is None:
        owners = [
            s.user_id
            for s in (await service.list_sessions(app_name=DEFAULT_APP_NAME)).sessions
            if s.id == session_id
        ]
        if len(owners) > 1:
            raise InvalidRequestError(
                f"Session {session_id!r} exists for several users ({', '.join(owners)}); "
                "pick one with --user."
            )
        user = owners[0] if owners else None
    session = (
        await service.get_session(app_name=DEFAULT_APP_NAME, user_id=user, session_id=session_id)
        if user is not None
        else None
    )
    if session is None:
        raise InvalidRequestError(
            f"No session {session_id!r} in the store; `troupe sessions list` shows the ids."
        )
    return session


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")


SESSION_COLUMNS = (
    Column("session", worth=10, cut=True, min_width=13),
    Column("last active", worth=8),
    Column("last turn", worth=6, cut=True, min_width=9),
    Column("first message", worth=7, cut=True, min_width=13),
    Column("events", worth=4, justify="right"),
    Column("user", worth=3, cut=True, min_width=6),
)
"""``sessions list``'s columns; at 80 columns the last ones give way first."""


def _print_list(found: list[Session], outcomes: dict[str, str], json_output: bool) -> None:
    from ..runtime.events import conversation

    listed = []
    for s in found:
        first = next((line.text for line in conversation(s.events) if line.author == "user"), "")
        listed.append(
            {
                "id": s.id,
                "user": s.user_id,
                "updated": s.last_update_time,
                "events": len(s.events),
                "last_turn": outcomes.get(s.id),
                "first_message": first,
            }
        )
    if json_output:
        print(json_text(listed, indent=2))
        return
    console = _console()
    if not found:
        console.print("no stored sessions")
        return
    rows = [
        [
            str(item["id"]),
            _when(float(item["updated"])),  # type: ignore[arg-type]
            str(item["last_turn"] or ""),
            str(item["first_message"]),
            str(item["events"]),
            str(item["user"]),
        ]
        for item in listed
    ]
    console.print(fitted_table(SESSION_COLUMNS, rows, console.width))


def _last_outcomes(
    config: Path | None, data_dir: Path | None, found: list[Session]
) -> dict[str, str]:
    """Each listed session's last turn, as its trace says it ended (none: no trace)."""
    from ..errors import TroupeError
    from ..settings import load_settings

    try:
        traces = load_settings(config_path=config, data_dir=data_dir).trace_store()
        last = {s.id: traces.list(limit=1, session_id=s.id) for s in found}
    except TroupeError:
        return {}  # the list still shows; the column stays empty
    return {sid: found_[0].outcome for sid, found_ in last.items() if found_}


def _print_conversation(session: Session, json_output: bool) -> None:
    from ..runtime.events import conversation

    lines = conversation(session.events)
    if json_output:
        print(json_text([asdict(line) for line in lines], indent=2))
        return
    console = _console()
    console.print(
        f"[bold]session[/] [cyan]{for_rich(session.id)}[/] · user {for_rich(session.user_id)} · "
        f"{len(session.events)} events · last active {_when(session.last_update_time)}"
    )
    for line in lines:
        _print_line(console, line)


def _print_line(console: Console, line: Line) -> None:
    who = f"[bold]{for_rich(line.author)}[/]"
    if line.kind == "message":
        console.print(f"[bold green]you[/]: {for_rich(line.text)}")
    elif line.kind == "transfer":
        console.print(f"{who} [dim]→ transfers to[/] [bold cyan]{for_rich(line.name or '')}[/]")
    elif line.kind == "tool_call":
        console.print(
            f"{who} [dim]calls[/] [yellow]{for_rich(line.name or '')}[/]({for_rich(line.text)})"
        )
    elif line.kind == "approval":
        tool = f"[yellow]{for_rich(line.name or '')}[/]"
        console.print(f"{who} [dim]asks to run[/] {tool}: {for_rich(line.text)}")
    elif line.kind == "decision":
        console.print(f"  [dim]↳ {for_rich(line.text)}[/]")
    elif line.kind == "tool_result":
        text = " ".join(visible(line.text).split())
        console.print(f"  [dim]↳ {for_rich(line.name or '')}: {for_rich(text[:200])}[/]")
    else:
        console.print(f"{who}: {for_rich(line.text.strip())}")
