"""Embedding providers: one small interface, a local offline default and an HTTP provider.

``get_provider()`` returns the process-wide provider chosen by settings. Loading a model never
blocks start-up: the local model loads on first use or in the background (``warm_up``), and its
state (``loading`` / ``ready`` / ``error``) is observable for status pages.
"""

from __future__ import annotations

import threading

from django.conf import settings

from memories.embeddings.base import EmbeddingError, EmbeddingProvider, ModelState

__all__ = ["EmbeddingError", "EmbeddingProvider", "ModelState", "get_provider", "reset_provider"]

_provider: EmbeddingProvider | None = None
_lock = threading.Lock()


def _build() -> EmbeddingProvider:
    kind = settings.EMBEDDING_PROVIDER
    if kind == "local":
        from memories.embeddings.local import LocalMiniLMProvider

        return LocalMiniLMProvider(threads=settings.EMBEDDING_THREADS)
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
