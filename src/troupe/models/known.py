"""Model names LiteLLM knows, to catch a misspelt name before its first request.

LiteLLM ships its model list as a JSON file (prices and context windows). It is
read straight from the installed package, without importing LiteLLM (slow), and
only to suggest a name: a model newer than the list is never refused for being
missing from it.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
from functools import cache
from pathlib import Path

_LIST_FILE = "model_prices_and_context_window_backup.json"
_CUTOFF = 0.85
"""How alike two names must be to suggest one for the other (difflib ratio)."""


@cache
def known_models() -> frozenset[str]:
    """Every model name in LiteLLM's bundled list (empty when it cannot be read)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    try:
        text = (Path(spec.submodule_search_locations[0]) / _LIST_FILE).read_text("utf-8")
        names = json.loads(text)
    except (OSError, ValueError):
        return frozenset()
    return frozenset(name for name in names if isinstance(name, str) and name != "sample_spec")


def did_you_mean(name: str) -> str | None:
    """The known name ``name`` most likely misspells; None when it is known or nothing is close.

    ``provider/model`` names are compared with the other names of that provider,
    and with the bare model names LiteLLM lists for it.
    """
    known = known_models()
    if not known or name in known:
        return None
    provider, slash, model = name.rpartition("/")
    if slash and model in known:
        return None
    bare = [n for n in known if "/" not in n]
    if not slash:
        return _closest(name, bare)
    if match := _closest(name, [n for n in known if n.startswith(f"{provider}/")]):
        return match
    if match := _closest(model, bare):
        return f"{provider}/{match}"
    return None


def _closest(name: str, pool: list[str]) -> str | None:
    matches = difflib.get_close_matches(name, pool, n=1, cutoff=_CUTOFF)
    return matches[0] if matches else None
