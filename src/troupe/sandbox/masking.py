"""The forms of a secret a model can ask a command to print, for masking output.

Masking is a safety net, not a boundary: a command that can read a value can
always print it in a form no filter knows. It catches the easy ones: the
value itself, reversed, hex, base64 (at any byte alignment, standard and
URL-safe), URL-encoded, and any of these split across lines or spaces.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Mapping
from urllib.parse import quote, quote_plus

MIN_MASKED_CHARS = 6
"""Shorter forms are not masked: they would match ordinary text."""
KEY_NAME = re.compile(
    r"(?:^|_)(?:KEY|APIKEY|SECRET|TOKEN|CREDENTIALS?|AUTH|COOKIE)(?:_|$)|PASSW(?:OR)?D|PASSPHRASE",
    re.IGNORECASE,
)
"""Names of troupe's own variables whose values are masked too (OPENAI_API_KEY ...)."""
_GAP = r"[\s\\]*"


def _base64_cores(raw: bytes) -> set[str]:
    """The base64 characters that depend only on ``raw``, at each of the three alignments."""
    cores = set()
    for offset in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(b"\0" * offset + raw).decode("ascii")
            start = -(-offset * 8 // 6)  # ceil: the first character free of the padding bytes
            end = (offset + len(raw)) * 8 // 6
            cores.add(text[start:end])
    return cores


@functools.lru_cache(maxsize=256)
def forms(value: str) -> tuple[str, ...]:
    """Every form of ``value`` to mask, longest first."""
    raw = value.encode("utf-8")
    found = {value, value[::-1], raw.hex(), raw.hex().upper(), quote(value, safe="")}
    every_byte = "".join(f"%{b:02X}" for b in raw)
    found |= {quote_plus(value), every_byte, every_byte.lower(), *_base64_cores(raw)}
    return tuple(sorted((f for f in found if len(f) >= MIN_MASKED_CHARS), key=len, reverse=True))


@functools.lru_cache(maxsize=256)
def _pattern(form: str) -> re.Pattern[str]:
    # Any of the forms, with line breaks, spaces or backslashes between its characters.
    return re.compile(_GAP.join(re.escape(ch) for ch in form))


def mask_forms(text: str, value: str, replacement: str) -> str:
    """``text`` with every form of ``value`` (split or not) replaced by ``replacement``."""
    for form in forms(value):
        if form in text:
            text = text.replace(form, replacement)
        if len(form) >= 2 * MIN_MASKED_CHARS:
            text = _pattern(form).sub(replacement, text)
    return text


def process_keys(environ: Mapping[str, str]) -> dict[str, str]:
    """troupe's own credential variables in ``environ`` (its snapshot of the
    environment) and their values, masked like stored secrets."""
    return {
        name: value
        for name, value in environ.items()
        if KEY_NAME.search(name) and len(value) >= MIN_MASKED_CHARS
    }
