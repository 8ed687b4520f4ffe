"""Small text helpers shared by the offline model's rules."""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[^\W_]+")
"""Letters and digits, accented ones too ("Wissensdatenbank", "página")."""
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "is",
        "are",
        "be",
        "it",
        "this",
        "that",
        "these",
        "those",
        "my",
        "me",
        "i",
        "you",
        "your",
        "please",
        "can",
        "could",
        "would",
        "will",
        "do",
        "does",
        "here",
        "there",
        "what",
        "which",
        "who",
        "how",
        "me",
        "us",
        "we",
        "our",
        "some",
        "any",
        "all",
        "into",
        "as",
        "its",
        "if",
        "then",
        "than",
    ]
)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude stem so that 'files', 'memories', 'listing' and 'listed' meet their base word.
    Cached: the stand-in stems the same few thousand words on every decision."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    for suffix in ("ing", "ed", "s"):
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def words(text: str) -> list[str]:
    """Lower-case word tokens of ``text``."""
    return _WORD.findall(text.lower())


def stems(text: str) -> set[str]:
    """Stems of the non-stopword tokens of ``text``."""
    return {stem(w) for w in words(text) if w not in STOPWORDS}


@lru_cache(maxsize=8192)
def _phrase_stems(phrase: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in words(phrase))


def phrase_position(text: str, phrase: str) -> int | None:
    """Word index where ``phrase`` first occurs in ``text`` as whole words, else None."""
    target = _phrase_stems(phrase)
    if not target:
        return None
    tokens = _phrase_stems(text)
    n = len(target)
    return next((i for i in range(len(tokens) - n + 1) if tokens[i : i + n] == target), None)


def contains_phrase(text: str, phrase: str) -> bool:
    """True when ``phrase`` occurs in ``text`` as whole words (case-insensitive)."""
    return phrase_position(text, phrase) is not None
