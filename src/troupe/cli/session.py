"""A chat session in the terminal: one-shot messages and the REPL."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from ..errors import TroupeError
from ..logfile import attach_log_file
from ..mcp import approve_unjailed_start, waiting_for_approval
from ..models.resolve import model_label
from ..models.setup_check import check_model_setup
from ..runtime.approvals import (
    Answer,
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequest,
    default_policy,
    is_approval_plumbing,
    parse_policy,
    run_with_approvals,
)
from ..runtime.assistant import Assistant
from ..runtime.events import Step, partial_text, steps
from ..settings import load_settings
from ..terminal_text import for_rich, json_text
from ..tree import build_agent_tree
from .common import approve_unjailed_server, err_console
from .interrupts import TurnInterrupts
from .render import error_line, path_summary, render_step
from .repl import (
    ALLOW_CHOICES,
    COMMANDS,
    LineReader,
    allow_prompt,
    ask,
    command_of,
    new_session_id,
    prompt_text,
)

EXIT_WORDS = {"/exit", "/quit", "exit", "quit"}
YES_WORDS = {"y", "yes"}
ALWAYS_WORDS = {"a", "always"}


@dataclass
class ChatSession:
    """An Assistant bound to one session id, printing steps as they happen."""

    assistant: Assistant
    session_id: str
    console: Console
    json_output: bool
    label: str
    approvals: ApprovalPolicy = "deny"
    """ask, auto or deny: how tool calls that need approval are answered."""
    history_dir: Path | None = None
    """Where the REPL keeps its line history (the data directory); None keeps none."""

    @classmethod
    def open(
        cls,
        *,
        config_path: Path | None,
        model: str | None,
        workspace: Path | None,
        topology: str | None,
        single_agent: bool,
        data_dir: Path | None,
        session_id: str,
        persist: bool,
        json_output: bool,
        console: Console,
        approve: str | None = None,
        api_base: str | None = None,
        router: str | None = None,
        trust_workspace_config: bool | None = None,
    ) -> ChatSession:
        policy = (
            parse_policy(approve)
            if approve is not None
            else default_policy(interactive=sys.stdin.isatty())
        )
        settings = load_settings(
            config_path=config_path,
            model=model,
            workspace=workspace,
            topology=topology,
            data_dir=data_dir,
            multi_agent=False if single_agent else None,
            api_base=api_base,
            router=router,
            trust_workspace_config=trust_workspace_config,
        )
        # Before the first prompt: a missing key or an unreachable server is said
        # now, in one line, not after the first message.
        for warning in check_model_setup(
            settings.config.model,
            api_base=settings.config.api_base,
            api_key=settings.config.api_key,
            environ=settings.environ,
        ):
            err_console.print(f"[yellow]warning:[/] {for_rich(warning)}", soft_wrap=True)
        traces = settings.trace_store()
        traces.open()  # a data directory that cannot hold it fails before the turn runs
        # Before the tree: MCP toolsets send their servers' stderr to the log file.
        attach_log_file(settings.data_dir)
        root = build_agent_tree(settings.config)
        if policy == "ask":
            # A stdio server the jail cannot hold here starts only with a person's yes.
            for toolset in waiting_for_approval(root):
                if approve_unjailed_server(toolset.troupe_placement.server):  # type: ignore[attr-defined]
                    approve_unjailed_start(toolset)
        service = None
        if persist:
            service = settings.open_session_store()
        # Replies stream to the terminal as the model writes them (JSON output
        # keeps one object a step).
        assistant = Assistant(root, service, trace_store=traces, stream=not json_output)
        label = model_label(getattr(root, "model", "") or "")
        return cls(assistant, session_id, console, json_output, label, policy, settings.data_dir)

    def send_interruptibly(self, runner: asyncio.Runner, text: str) -> bool | None:
        """Run one turn on ``runner``'s loop; Ctrl-C cancels it. True when the turn
        answered, False when it failed, None when it was cancelled."""
        with TurnInterrupts(runner.get_loop(), self.send(text)) as turn:
            try:
                return runner.run(turn.wait())
            except asyncio.CancelledError:
                pass
        self._show_cancelled()
        return None

    def _show_cancelled(self) -> None:
        if self.json_output:
            record = {"author": "troupe", "kind": "cancelled", "name": None, "text": ""}
            print(json_text({**record, "text": "the turn was cancelled (Ctrl-C)"}), flush=True)
            return
        self.console.print()  # a streamed line or ^C may be open
        self.console.print(
            "[yellow]turn cancelled[/] [dim](recorded as cancelled; the session keeps "
            "what ran before)[/]",
            soft_wrap=True,
        )

    async def send(self, text: str) -> bool:
        """Send one message, printing each step; False when the turn failed.

        A failure is reported once, on one line: an error event (a remote agent
        that failed) is shown after the turn, unless the turn then raised, when
        the exception's line says the same more exactly.
        """
        done: list[Step] = []
        streaming: str | None = None  # the author whose reply is being streamed
        try:
            async for event in run_with_approvals(
                self.assistant,
                self.session_id,
                text,
                policy=self.approvals,
                ask=self._ask,
                on_decision=self._show_decision,
            ):
                if is_approval_plumbing(event):
                    continue
                if delta := partial_text(event):
                    streaming = self._stream(event.author, delta, streaming)
                    continue
                for step in steps(event):
                    done.append(step)
                    if streaming is not None:
                        self.console.print()  # end the streamed line
                        streamed, streaming = streaming, None
                        if step.kind == "text" and step.author == streamed:
                            continue  # already shown, piece by piece
                    if step.kind != "error":
                        self._show(step)
        except TroupeError:
            raise
        except Exception as exc:  # a model or network failure ends the turn, not the program
            self._show(Step("troupe", "error", type(exc).__name__, error_line(exc)))
            return False
        failures = [step for step in done if step.kind == "error"]
        for step in failures:
            self._show(step)
        if not self.json_output and done:
            self.console.print(f"[dim]path: {for_rich(path_summary(done))}[/]")
        return not failures

    def _stream(self, author: str, delta: str, streaming: str | None) -> str:
        """Print a streamed piece of ``author``'s reply; the author now streaming."""
        if streaming != author:
            if streaming is not None:
                self.console.print()
            self.console.print(f"[bold]{for_rich(author)}[/]: ", end="")
        self.console.print(for_rich(delta), end="", soft_wrap=True)
        return author

    def _show(self, step: Step) -> None:
        if self.json_output:
            print(step.to_json(), flush=True)
        else:
            render_step(self.console, step)

    def repl(self) -> None:
        """Read messages until /exit or Ctrl-D; /help lists the REPL's commands.

        Lines are read in the main thread with no event loop running, so Ctrl-C at
        the prompt clears the line (readline's own KeyboardInterrupt) and Ctrl-C
        during a turn cancels the turn (see :class:`TurnInterrupts`); the session
        and its store stay open on one loop for the whole chat.
        """
        self.console.print(
            f"[bold]troupe[/] chat · model {for_rich(self.label)} · "
            f"session [cyan]{for_rich(self.session_id)}[/]"
            " · /help for commands",
            soft_wrap=True,
        )
        # With --json, standard output carries the steps' JSON only.
        reader = LineReader(self.history_dir, sys.stderr if self.json_output else None)
        prompt = prompt_text(colour=self.console.color_system is not None)
        hinted = False
        with asyncio.Runner() as runner:
            try:
                while True:
                    try:
                        text = reader.read(prompt).strip()
                    except KeyboardInterrupt:
                        # The line is dropped; the chat goes on.
                        self.console.print()
                        if not hinted:
                            self.console.print(
                                "[dim](the line was cleared; Ctrl-D or /exit leaves)[/]"
                            )
                        hinted = True
                        continue
                    except EOFError:
                        self.console.print()
                        break
                    if not text:
                        continue
                    if text in EXIT_WORDS:
                        break
                    command = command_of(text)
                    if command is None:
                        self.send_interruptibly(runner, text)
                    elif not runner.run(self._command(command)):
                        break
            finally:
                reader.save()
                runner.run(self.close())
        self.console.print(
            f"[dim]resume with: troupe chat --session {for_rich(self.session_id)}[/]",
            soft_wrap=True,
        )

    async def _command(self, command: str) -> bool:
        """Carry out a REPL command; False when it ends the chat."""
        if command in EXIT_WORDS:
            return False
        if command == "/new":
            self.session_id = new_session_id()
            self.console.print(f"new session [cyan]{for_rich(self.session_id)}[/]")
        elif command == "/sessions":
            await self._list_sessions()
        else:
            if command != "/help":
                self.console.print(f"[yellow]unknown command {for_rich(command)}[/]")
            for name, what in COMMANDS.items():
                self.console.print(f"  [bold]{name}[/]  {escape(what)}")
        return True

    async def _list_sessions(self) -> None:
        assistant = self.assistant
        listed = await assistant.session_service.list_sessions(
            app_name=assistant.app_name, user_id=assistant.user_id
        )
        found = sorted(listed.sessions, key=lambda s: s.last_update_time, reverse=True)
        if not found:
            self.console.print("[dim]no stored sessions[/]")
        for stored in found[:20]:
            mark = " (this one)" if stored.id == self.session_id else ""
            self.console.print(f"  [cyan]{for_rich(stored.id)}[/]{mark}")

    def send_once(self, text: str) -> bool | None:
        """Send one message (Ctrl-C cancels it), then release what the session holds
        (the browser). As :meth:`send_interruptibly`."""
        with asyncio.Runner() as runner:
            try:
                return self.send_interruptibly(runner, text)
            finally:
                runner.run(self.close())

    async def close(self) -> None:
        """Close the browser and MCP servers the tools may have started, the session
        store and the model provider's HTTP clients."""
        from ..builtins.browser_session import close_shared_browser
        from ..mcp import close_toolsets
        from ..models.clients import close_model_clients
        from ..remote import close_remote_agents
        from ..stores.sessions import close_session_store

        await close_shared_browser()
        await close_toolsets(self.assistant.root_agent)
        await close_remote_agents(self.assistant.root_agent)
        await close_session_store(self.assistant.session_service)
        await close_model_clients()

    async def _ask(self, request: ApprovalRequest) -> Answer:
        # The question goes to stderr with --json so stdout stays one JSON object a line.
        out = Console(stderr=True, highlight=False) if self.json_output else self.console
        # The model wrote every value shown here: a control character in it could
        # hide or rewrite part of the command, so each is shown as JSON (quoted,
        # with every control character and backslash escaped): exactly, visibly.
        out.print(
            f"[bold]{for_rich(request.agent)}[/] wants to run [yellow]{for_rich(request.tool)}[/]",
            soft_wrap=True,
        )
        for key, value in request.args.items():
            shown = json_text(value)
            out.print(f"  [dim]{for_rich(key)}[/] = {for_rich(shown)}", soft_wrap=True)
        if summary := request.effect.get("summary"):
            out.print(f"  [bold]effect:[/] {for_rich(summary)}", soft_wrap=True)
        if body := request.effect.get("body"):
            out.print(for_rich(body), soft_wrap=True)
        # Read here, in the main thread, with the turn paused: Ctrl-C at this
        # question cancels the turn (TurnInterrupts.asking), and no reader is
        # left behind to take the next line typed at the prompt.
        with TurnInterrupts.asking():
            if self.json_output:  # stdout carries JSON only: the question goes to stderr
                answer = out.input("[bold]allow?[/]" + escape(ALLOW_CHOICES))
                if not sys.stdin.isatty():  # echoed, as ask() does
                    out.print(for_rich(answer), soft_wrap=True)
            else:
                answer = ask(allow_prompt(colour=out.color_system is not None))
            answer = answer.strip().lower()
        if answer in ALWAYS_WORDS:
            return "always"
        return answer in YES_WORDS

    def _show_decision(self, request: ApprovalRequest, decision: ApprovalDecision) -> None:
        if self.json_output:
            text = json.dumps(
                {"approved": decision.approved, "reason": decision.reason}, ensure_ascii=False
            )
            record = {"author": request.agent, "kind": "approval", "name": request.tool}
            print(json_text({**record, "text": text}), flush=True)
        elif decision.approved:
            remembered = " [dim](allowed for this session)[/]" if decision.for_session else ""
            self.console.print(f"  [green]✓ {for_rich(request.tool)} approved[/]{remembered}")
        else:
            self.console.print(
                f"  [red]✗ {for_rich(request.tool)} not run:[/] [dim]{for_rich(decision.reason)}[/]"
            )
