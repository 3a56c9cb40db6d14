"""The local model shares large calls out over one single-threaded session per core.

Real model, no database. The pieces run on different sessions and finish in any order; the vectors
must still be the ones a single session gives, each in its text's place.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from memories.embeddings import EmbeddingError, local
from memories.embeddings.local import SPREAD_MIN_TEXTS, LocalMiniLMProvider

TEXTS = [
    "Invoices are due 30 days after issue.",
    "The checkout service retries payment webhooks three times, then pages the on-call engineer.",
    "Deploys freeze on Fridays.",
    "Use snake_case for database columns; the linter enforces it and reviews reject camelCase names.",
    "Maria owns the fraud rules.",
    "Refunds above 500 EUR need a second approval from finance before the payout job sends them.",
    "Staging resets every Monday at 06:00 UTC.",
    "The search index is rebuilt nightly.",
    "Customer data stays in the EU region; backups too, and support tooling may not copy it out.",
    "Feature flags older than 90 days are removed.",
    "Latency SLO for the public API is 300 ms at p95.",
]


@pytest.fixture(scope="module")
def spread() -> Iterator[LocalMiniLMProvider]:
    provider = LocalMiniLMProvider(threads=2)
    provider.warm_up(background=False)
    yield provider


@pytest.fixture(scope="module")
def single() -> Iterator[LocalMiniLMProvider]:
    provider = LocalMiniLMProvider(threads=1)  # one core: one session, no sharing out
    provider.warm_up(background=False)
    yield provider


def test_a_large_call_is_shared_out_and_gives_the_single_session_vectors(
    spread: LocalMiniLMProvider, single: LocalMiniLMProvider
) -> None:
    assert len(TEXTS) >= SPREAD_MIN_TEXTS

    shared = np.array(spread.embed(TEXTS))
    alone = np.array(single.embed(TEXTS))

    assert shared.shape == (len(TEXTS), 384)
    assert (shared * alone).sum(axis=1).min() > 0.9999
    # Each vector is in its own text's place: a text is closest to itself.
    similarity = shared @ alone.T
    assert list(similarity.argmax(axis=1)) == list(range(len(TEXTS)))


def test_calls_started_together_each_get_their_own_vectors(spread: LocalMiniLMProvider) -> None:
    calls = [TEXTS[start:] + TEXTS[:start] for start in (0, 3, 7)]

    futures = [spread.embed_later(texts) for texts in calls]

    for texts, future in zip(calls, futures, strict=True):
        expected = np.array(spread.embed(texts))
        assert np.allclose(np.array(future.result(timeout=60)), expected, atol=1e-5)


def test_a_failing_piece_fails_its_call_only(spread: LocalMiniLMProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    run = spread._run

    def broken_on_fridays(session: Any, texts: list[str]) -> Any:
        if any("Fridays" in text for text in texts):
            raise RuntimeError("onnxruntime exploded")
        return run(session, texts)

    monkeypatch.setattr(spread, "_run", broken_on_fridays)
    failing = spread.embed_later(TEXTS)
    healthy = spread.embed_later([text for text in TEXTS if "Fridays" not in text] * 2)

    with pytest.raises(EmbeddingError, match="onnxruntime exploded"):
        failing.result(timeout=60)
    assert len(healthy.result(timeout=60)) == 2 * (len(TEXTS) - 1)


def test_a_small_call_uses_the_one_session(spread: LocalMiniLMProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_sharing(*args: Any) -> Any:
        raise AssertionError("a query-sized call must not wait for the shared sessions")

    monkeypatch.setattr(spread, "_pieces", no_sharing)

    vector = spread.embed_one("When do deploys freeze?")

    assert len(vector) == 384
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_batch_sessions_that_cannot_start_are_an_embedding_error(monkeypatch: pytest.MonkeyPatch) -> None:
    provider = LocalMiniLMProvider(threads=2)
    provider.warm_up(background=False)  # the query session starts
    real_session = local._session

    def out_of_memory(model_path: Any, threads: int) -> Any:
        raise RuntimeError("Failed to allocate memory")

    monkeypatch.setattr(local, "_session", out_of_memory)
    with pytest.raises(EmbeddingError, match="could not start the batch sessions"):
        provider.embed(TEXTS)

    monkeypatch.setattr(local, "_session", real_session)  # nothing half-started stays behind
    assert len(provider.embed(TEXTS)) == len(TEXTS)
