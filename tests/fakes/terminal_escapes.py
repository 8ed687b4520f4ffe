"""Escape sequences a hostile model, file or server puts in text troupe prints.

Each is planted somewhere troupe shows text it did not write; a test then
checks the captured bytes: none of them arrives raw, and each is shown in
its escaped form (``\\x1b]52;...``).
"""

from __future__ import annotations

import re

_STYLE = re.compile(r"\x1b\[[0-9;]*m")
"""Rich's own colour and bold codes, which it writes at a terminal."""

CLIPBOARD = "\x1b]52;c;aGk=\x07"
"""OSC 52: write "hi" to the terminal's clipboard."""
TITLE = "\x1b]0;pwned\x07"
"""OSC 0: retitle the window."""
CLEAR_LINE = "\x1b[2K"
"""CSI 2K: erase the current line."""
C1 = "\x9b2K\x9d0;c1\x9c"
"""The one-byte CSI and OSC (C1 controls) and the string terminator."""
PAYLOAD = f"start {CLIPBOARD} {TITLE} fake{CLEAR_LINE}\rreal {C1} end"
"""All of them in one text, with a carriage return that would overwrite "fake"."""

RAW_BYTES = (
    b"\x1b]",
    b"\x07",
    b"fake\x1b[2K",
    b"\rreal",
    b"\x9b",
    b"\x9d",
    b"\xc2\x9b",
    b"\xc2\x9d",
)
"""Bytes of :data:`PAYLOAD` that must never reach the output (a terminal would act
on them). The line-clearing CSI and the carriage return are looked for where the
payload has them: troupe's own spinner clears its line with the same codes."""
SHOWN = (
    "\\x1b]52;c;aGk=\\x07",
    "\\x1b]0;pwned\\x07",
    "fake\\x1b[2K\\rreal",
    "\\x9b2K\\x9d0;c1\\x9c",
)
"""How :data:`PAYLOAD`'s parts appear, escaped, in text for a person."""
SHOWN_AS_JSON = (
    "\\u001b]52;c;aGk=\\u0007",
    "\\u001b]0;pwned\\u0007",
    "fake\\u001b[2K\\rreal",
    "\\u009b2K\\u009d0;c1\\u009c",
)
"""How they appear in JSON (``--json`` output, an approval prompt's arguments)."""


def raw_escapes(output: bytes) -> list[bytes]:
    """The parts of :data:`PAYLOAD` found raw in ``output``."""
    return [seq for seq in RAW_BYTES if seq in output]


def shown_escaped(output: bytes, forms: tuple[str, ...] = SHOWN) -> list[str]:
    """The escaped ``forms`` missing from ``output`` (wrapping and styles ignored)."""
    text = _STYLE.sub("", output.decode("utf-8", "replace"))
    flat = "".join(text.split())
    return [form for form in forms if "".join(form.split()) not in flat]
