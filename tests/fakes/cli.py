"""Reading what the CLI printed, whatever the terminal width."""

from __future__ import annotations

import re

_TREE_GUIDES = re.compile(r"[│├└─]")


def unwrapped(output: str) -> str:
    """``output`` as one line: rich's tree guides removed, wrapped lines joined.

    Rich wraps long lines to the terminal, and a long checkout or temporary
    path can push a sentence across two lines whatever COLUMNS says.
    """
    return " ".join(_TREE_GUIDES.sub(" ", output).split())
