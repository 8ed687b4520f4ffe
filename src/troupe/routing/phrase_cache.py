"""The router's phrase vectors, kept on disk between runs.

After the encoder's own load, encoding a tree's phrases (descriptions,
capabilities, keywords, tool descriptions, the greeting and general-question
examples) is most of the router's start-up work, and the result only changes
when the phrases or the encoder do. So the vectors are kept in the cache
(or the configured data) directory, one file per encoder version and list of phrases (its name is a
SHA-256 of both), readable and writable by the owner only. A file that cannot
be read or does not fit is ignored and written again; a cache that cannot be
written is skipped with a warning: the router works without it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..sandbox.private import private_dir

logger = logging.getLogger("troupe.router")


@dataclass(frozen=True)
class PhraseCache:
    """Phrase vectors in ``directory``, keyed by encoder version and phrases."""

    directory: Path

    def path(self, encoder_id: str, texts: Sequence[str]) -> Path:
        """The file that holds the vectors of ``texts`` under ``encoder_id``."""
        digest = hashlib.sha256("\0".join([encoder_id, *texts]).encode("utf-8")).hexdigest()
        return self.directory / f"{digest[:40]}.npy"

    def load(self, encoder_id: str, texts: Sequence[str]) -> np.ndarray[Any, Any] | None:
        """The stored vectors, one row a text, or None when there are none that fit."""
        try:
            vectors = np.load(self.path(encoder_id, texts), allow_pickle=False)
        except (OSError, ValueError):
            return None
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            return None
        return vectors

    def store(self, encoder_id: str, texts: Sequence[str], vectors: np.ndarray[Any, Any]) -> None:
        """Keep ``vectors`` for next time (owner-only file, replaced atomically)."""
        try:
            private_dir(self.directory)
            handle, temporary = tempfile.mkstemp(dir=self.directory, suffix=".tmp")  # 0600
            try:
                with os.fdopen(handle, "wb") as file:
                    np.save(file, np.asarray(vectors, dtype=np.float32), allow_pickle=False)
                os.replace(temporary, self.path(encoder_id, texts))
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as exc:
            logger.warning("router: phrase vectors not cached in %s: %s", self.directory, exc)
