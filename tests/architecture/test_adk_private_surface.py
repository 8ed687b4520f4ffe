"""Only ``troupe/_adk_compat.py`` reaches past ADK's public API.

An ADK release may change anything private; with every such reach in one
module (and pinned by ``tests/adk_compat/``) an upgrade breaks there first.
The scan (``fakes/adk_surface.py``) reads ADK's private names and its words
from the installed package.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import troupe
from fakes.adk_surface import scan, scan_package

SRC = Path(troupe.__file__).resolve().parent
COMPAT = "_adk_compat.py"


def test_no_module_but_the_compat_module_reaches_past_adks_public_api() -> None:
    found = scan_package(SRC, "troupe", frozenset({COMPAT}))
    assert not found, "move these into troupe/_adk_compat.py (or use ADK's public API):\n" + (
        "\n".join(map(str, found))
    )


def test_the_scan_sees_every_kind_of_reach_the_compat_module_holds() -> None:
    found = "\n".join(r.what for r in scan(SRC / COMPAT, COMPAT, "troupe"))
    assert "uses ADK's private ._invocation_context" in found
    assert "uses ADK's private '_event_queue' by name" in found
    assert "overrides ADK's private _get_declaration()" in found
    assert "overrides ADK's private _create_runner()" in found
    assert "assigns __class__" in found
    assert "uses ADK's private ._db_path" in found
    assert "uses ADK's private ._storage_update_marker" in found
    assert found.count("matches ADK's words with a regex") >= 5
    assert "tests text for ADK's words" in found


PLANTED = {
    "the live invocation context": """
        def agent_of(callback_context):
            return callback_context._invocation_context.agent
    """,
    "a tool's declaration": """
        def declaration(tool):
            return tool._get_declaration()
    """,
    "a private attribute by name": """
        def queue(ctx):
            return getattr(ctx, "_event_queue", None)
    """,
    "a private attribute written": """
        def ask(tool):
            tool._require_confirmation = True
    """,
    "an override of a FunctionTool's declaration": """
        from google.adk.tools.function_tool import FunctionTool

        class Named(FunctionTool):
            def _get_declaration(self):
                return super()._get_declaration()
    """,
    "an override on a class passed in": """
        def queued(server_cls):
            class Queued(server_cls):
                def _create_runner(self, agentic_app, app_name):
                    return None
            return Queued
    """,
    "a class swap": """
        def adopt(tool, cls):
            tool.__class__ = cls
    """,
    "a class swap by setattr": """
        def adopt(tool, cls):
            setattr(tool, "__class__", cls)
    """,
    "a regex over ADK's error": """
        import re
        UNKNOWN = re.compile(r"Transfer target agent '([^']+)' not found")
    """,
    "a regex over ADK's transfer instruction": """
        import re
        BLOCK = re.compile(r"You have a list of other agents to transfer to:.*", re.S)
    """,
    "a text test for ADK's relayed context": """
        PREFIX = "For context:"

        def relayed(text):
            return text.startswith(PREFIX)
    """,
    "a private ADK module": """
        from google.adk.flows.llm_flows._base_llm_processor import BaseLlmRequestProcessor
    """,
}


@pytest.mark.parametrize("source", PLANTED.values(), ids=PLANTED.keys())
def test_a_planted_reach_is_found(tmp_path: Path, source: str) -> None:
    module = tmp_path / "planted.py"
    module.write_text(textwrap.dedent(source))
    assert scan(module, "planted.py", "troupe")


def test_troupes_own_underscore_names_on_adk_subclasses_are_not_reaches(tmp_path: Path) -> None:
    module = tmp_path / "own.py"
    module.write_text(
        textwrap.dedent(
            """
            import re
            from google.adk.plugins.base_plugin import BasePlugin
            from google.adk.agents.base_agent import BaseAgent

            WORDS = re.compile(r"\\w+")

            class TimerPlugin(BasePlugin):
                def _expire(self):
                    self._timers = {}

            class Custom(BaseAgent):
                async def _run_async_impl(self, ctx):
                    async for event in super()._run_async_impl(ctx):
                        yield event

            def repeats(turn):
                return turn._repeats
            """
        )
    )
    assert scan(module, "own.py", "troupe") == []
