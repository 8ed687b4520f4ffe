"""Text from a model, a tool, a file or a server, made safe to print at a terminal.

A terminal acts on control characters in what it prints: ``ESC ]52;c;...BEL``
writes the clipboard, ``ESC ]0;...BEL`` retitles the window, ``ESC [2K`` and a
carriage return erase what was just shown (an approval prompt could then show
one command and run another), ``0x9b`` and ``0x9d`` are CSI and OSC in one
byte. Every place troupe prints text it did not write itself passes it
through :func:`visible` (or :func:`for_rich` when Rich prints it, which also
escapes Rich's ``[markup]``), so such characters appear as ``\\x1b]52;...``
and are never interpreted. Newlines and tabs stay as they are. Bidirectional
overrides (``U+202E`` ...) are shown as ``\\u202e``: they reorder what a line
seems to say. Backslashes are left alone, so ordinary text (paths, regular
expressions) reads as written.

:func:`json_text` is the ``--json`` form: exact JSON, with the same
characters written as JSON escapes (``\\u001b``), which decode to the same value.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rich.markup import escape

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 controls but tab and newline, DEL, C1 controls, and bidirectional controls."""
_NAMED = {"\r": "\\r", "\b": "\\b", "\f": "\\f", "\v": "\\v"}


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character a terminal would act on shown escaped.

    >>> visible("\\x1b]0;pwned\\x07 done\\r")
    '\\\\x1b]0;pwned\\\\x07 done\\\\r'
    """
    return _UNSAFE.sub(_shown, text)


def for_rich(text: object) -> str:
    """``text`` for a Rich markup string: control characters shown, ``[markup]`` escaped."""
    return escape(visible(str(text)))


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_text(value: Any, **options: Any) -> str:
    """``value`` as JSON (``json.dumps`` with ``ensure_ascii=False`` and ``options``),
    with DEL, C1 and bidirectional controls JSON-escaped too.

    Outside strings JSON is ASCII, so every such character sits in a string,
    and ``\\u009b`` there decodes to the same value.
    """
    options.setdefault("ensure_ascii", False)
    return _UNSAFE.sub(_json_escape, json.dumps(value, **options))
