"""Embedding providers: one small interface, a local offline default and an HTTP provider.

``get_provider()`` returns the process-wide provider chosen by settings. Loading a model never
blocks start-up: the local model loads on first use or in the background (``warm_up``), and its
state (``loading`` / ``ready`` / ``error``) is observable for status pages.
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor

from django.conf import settings

from memories.embeddings.base import EmbeddingError, EmbeddingProvider, ModelState

__all__ = ["EmbeddingError", "EmbeddingProvider", "ModelState", "get_provider", "query_vector", "query_vector_soon",
           "reset_provider"]  # fmt: skip

_provider: EmbeddingProvider | None = None
_lock = threading.Lock()


def _build() -> EmbeddingProvider:
    kind = settings.EMBEDDING_PROVIDER
    if kind == "local":
        from memories.embeddings.local import LocalMiniLMProvider

        return LocalMiniLMProvider(threads=settings.EMBEDDING_THREADS, int8=settings.EMBEDDING_INT8)
    if kind == "openai":
        from memories.embeddings.http import OpenAICompatibleProvider

        return OpenAICompatibleProvider(
            base_url=settings.EMBEDDING_BASE_URL,
            model=settings.EMBEDDING_MODEL,
            api_key=settings.EMBEDDING_API_KEY,
            dimensions=settings.EMBEDDING_DIMENSIONS,
            timeout=settings.EMBEDDING_TIMEOUT,
        )
    raise EmbeddingError(f"EMBEDDING_PROVIDER={kind!r} is not known; use 'local' or 'openai'")


def get_provider() -> EmbeddingProvider:
    global _provider  # noqa: PLW0603 - one provider (one loaded model) per process
    if _provider is None:
        with _lock:
            if _provider is None:
                _provider = _build()
    return _provider


def reset_provider(provider: EmbeddingProvider | None = None) -> None:
    """Replace the process-wide provider (settings changed, or a test installs its own)."""
    global _provider  # noqa: PLW0603
    with _lock:
        _provider = provider
    with _queries_lock:
        _queries.clear()


_queries: OrderedDict[tuple[int, str], array[float]] = OrderedDict()
_queries_lock = threading.Lock()


def query_vector(text: str, wait_seconds: float | None = None) -> list[float]:
    """The vector of a search query: from the recent queries' cache (EMBEDDING_QUERY_CACHE_SIZE), else
    embedded (waiting at most ``wait_seconds`` when given) and remembered. Raises EmbeddingError as
    the provider does; a failure is not remembered. The cached vector is the provider's, float for
    float (float32 models are stored as float32)."""
    provider = get_provider()
    size = settings.EMBEDDING_QUERY_CACHE_SIZE
    key = (id(provider), text)
    if size > 0:
        with _queries_lock:
            cached = _queries.get(key)
            if cached is not None:
                _queries.move_to_end(key)
                return cached.tolist()
    vector = provider.embed_one(text) if wait_seconds is None else provider.embed_within([text], wait_seconds)[0]
    if size > 0:
        stored = array("f", vector)
        if stored.tolist() != list(vector):  # not float32: keep every digit
            stored = array("d", vector)
        with _queries_lock:
            _queries[key] = stored
            while len(_queries) > size:
                _queries.popitem(last=False)
    return vector


_query_embedder = ThreadPoolExecutor(max_workers=4, thread_name_prefix="query-embedding")


def query_vector_soon(text: str) -> Future[list[float]]:
    """``query_vector`` in a worker thread, waiting at most EMBEDDING_QUERY_WAIT_SECONDS: a search
    embeds its query (the model runs outside the GIL) while its keyword retriever waits on the
    database; its vector retriever then runs beside that one, on a reader of the process with a
    connection of its own (memory_platform.db.beside), or after it on the request's connection."""
    return _query_embedder.submit(query_vector, text, settings.EMBEDDING_QUERY_WAIT_SECONDS)
