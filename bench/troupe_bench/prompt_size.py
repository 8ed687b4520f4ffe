"""Size of the orchestrator's request, in tokens, with and without ADK's transfer list.

Tokenizer: OpenAI's ``o200k_base`` (tiktoken), read from the copy LiteLLM
bundles, so nothing is downloaded.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from troupe.builtins import builtin_tools
from troupe.config import Config
from troupe.runtime.assistant import Assistant
from troupe.testing import ScriptedModel
from troupe.tree import build_agent_tree

TOKENIZER = "o200k_base"


def _encoder() -> Any:
    import litellm
    import tiktoken

    bundled = Path(litellm.__file__).parent / "litellm_core_utils" / "tokenizers"
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(bundled))
    return tiktoken.get_encoding(TOKENIZER)


async def _first_request(guards: bool, workspace: Path) -> tuple[str, str]:
    model = ScriptedModel(replies=["hi"])
    config = Config(tools=builtin_tools(workspace=workspace), model=model, guards=guards)
    await Assistant(build_agent_tree(config)).run_and_collect("size", "hello")
    request = model.requests[0]
    system = str(request.config.system_instruction or "")
    decls = [
        d.model_dump(exclude_none=True, mode="json")
        for t in request.config.tools or []
        for d in getattr(t, "function_declarations", None) or []
    ]
    return system, json.dumps(decls, sort_keys=True)


async def measure(workspace: Path) -> dict[str, Any]:
    """Tokens in the orchestrator's first request: system instruction and tool declarations."""
    enc = _encoder()
    out: dict[str, Any] = {"tokenizer": TOKENIZER}
    for label, guards in (("before", False), ("after", True)):
        system, tools = await _first_request(guards, workspace)
        out[label] = {
            "system_tokens": len(enc.encode(system)),
            "tool_tokens": len(enc.encode(tools)),
            "total_tokens": len(enc.encode(system)) + len(enc.encode(tools)),
        }
    return out
