from __future__ import annotations

import enum
import functools
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from memory_platform import metrics


class EmbeddingError(RuntimeError):
    """The provider could not produce embeddings; the message says why."""


class ModelState(enum.StrEnum):
    IDLE = "idle"
    LOADING = "loading"
    READY = "ready"
    ERROR = "error"


class EmbeddingProvider(ABC):
    """Turns texts into unit-length vectors of ``dimensions`` floats.

    Every provider's ``embed`` is timed for /metrics (memory_platform.metrics: seconds per call and
    texts, by provider class), whoever calls it: the wrapping is done once, for each subclass."""

    name: str
    dimensions: int

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "embed" in cls.__dict__:
            cls.embed = _timed(cls.__dict__["embed"])  # type: ignore[method-assign,assignment]

    def __init__(self) -> None:
        self._state = ModelState.IDLE
        self._error = ""
        self._state_lock = threading.Lock()

    @property
    def state(self) -> ModelState:
        return self._state

    @property
    def error(self) -> str:
        return self._error

    def _set_state(self, state: ModelState, error: str = "") -> None:
        with self._state_lock:
            self._state = state
            self._error = error

    def warm_up(self, *, background: bool = True) -> None:  # noqa: B027 - optional hook
        """Start getting ready (load a model, check a connection) without blocking the caller."""

    def settle(self, seconds: float) -> None:  # noqa: B027 - optional hook
        """Wait up to ``seconds`` for what ``warm_up`` started; a process calls it before it exits."""

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` in order. Raises EmbeddingError if it cannot."""

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def embed_within(self, texts: Sequence[str], seconds: float) -> list[list[float]]:
        """As ``embed``, for a caller that cannot wait longer than ``seconds`` (a write, a search).

        A model in this process answers in milliseconds and is simply called; a provider that can
        hang (one over the network) overrides this to give up after ``seconds``."""
        return self.embed(texts)

    def embed_later(self, texts: Sequence[str]) -> Future[list[list[float]]]:
        """Start embedding ``texts`` and return at once; the future holds the vectors or the
        EmbeddingError. Calls are started in the order they are made, so a caller can write the
        vectors of one call while the next ones are embedded."""
        return _background.submit(self.embed, list(texts))

    def describe(self) -> dict[str, object]:
        return {
            "provider": type(self).__name__,
            "model": self.name,
            "dimensions": self.dimensions,
            "state": self.state.value,
            "error": self.error or None,
        }


_background = ThreadPoolExecutor(max_workers=2, thread_name_prefix="embedding-later")


def _timed(
    embed: Callable[[Any, Sequence[str]], list[list[float]]],
) -> Callable[[Any, Sequence[str]], list[list[float]]]:
    @functools.wraps(embed)
    def timed(self: Any, texts: Sequence[str]) -> list[list[float]]:
        provider = type(self).__name__
        started = time.perf_counter()
        vectors = embed(self, texts)
        metrics.EMBEDDING_SECONDS.labels(provider).observe(time.perf_counter() - started)
        metrics.EMBEDDED_TEXTS.labels(provider).inc(len(texts))
        return vectors

    return timed
