"""The local model computes in int8 by default: the int8 model is made from the installed one on first
use, once per machine, and gives vectors close to the float model's, the same for a text alone or
in a batch."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memories.embeddings.base import EmbeddingError
from memories.embeddings.local import SPREAD_MIN_TEXTS, LocalMiniLMProvider, int8_model, model_files

pytestmark = pytest.mark.real_embedder

TEXTS = [
    "Deploys are frozen from 20 December to 3 January.",
    "The billing service owns invoices; support reads them.",
    "Use ruff for linting and mypy in strict mode.",
    "Our customers in Germany need invoices in German.",
    "Postgres runs with pgvector; HNSW indexes the embeddings.",
    "Ask the on-call engineer before restarting the queue workers.",
    "Feature flags are removed two weeks after a full rollout.",
    "The API rate limit is 120 requests a minute per token.",
    "Never log a customer's email address.",
]


@pytest.fixture(scope="module")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def int8(directory: Path) -> Iterator[LocalMiniLMProvider]:
    provider = LocalMiniLMProvider(threads=2, int8=True, directory=directory)
    provider.warm_up(background=False)
    yield provider


@pytest.fixture(scope="module")
def floats() -> Iterator[LocalMiniLMProvider]:
    provider = LocalMiniLMProvider(threads=1, int8=False)
    provider.warm_up(background=False)
    yield provider


def test_the_int8_model_is_made_once_from_the_installed_one(int8: LocalMiniLMProvider, directory: Path) -> None:
    made = sorted(directory.glob("*.onnx"))
    source, _ = model_files()

    assert len(made) == 1 and made[0].stat().st_size > 1_000_000
    assert made[0] != source
    stamp = made[0].stat().st_mtime_ns
    assert int8_model(source, directory) == made[0]  # found, not made again
    assert made[0].stat().st_mtime_ns == stamp
    assert not [path for path in directory.iterdir() if path.suffix == ".tmp"]


def test_int8_vectors_are_close_to_the_float_models(int8: LocalMiniLMProvider, floats: LocalMiniLMProvider) -> None:
    quantized = np.array(int8.embed(TEXTS))
    exact = np.array(floats.embed(TEXTS))

    cosines = (quantized * exact).sum(axis=1)
    assert cosines.min() > 0.98
    assert list((quantized @ exact.T).argmax(axis=1)) == list(range(len(TEXTS)))


def test_a_text_gets_the_same_vector_alone_and_in_a_batch(int8: LocalMiniLMProvider) -> None:
    assert len(TEXTS) >= SPREAD_MIN_TEXTS  # the batch is shared out over the single-threaded sessions

    batch = np.array(int8.embed(TEXTS))
    alone = np.array([int8.embed_one(text) for text in TEXTS])

    assert np.abs(batch - alone).max() < 1e-6


def test_an_unwritable_directory_says_where(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    source, _ = model_files()

    with pytest.raises(EmbeddingError, match=f"could not write the int8 embedding model in {blocked}"):
        int8_model(source, blocked / "models")


def test_without_a_writable_directory_the_float_model_runs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    provider = LocalMiniLMProvider(threads=1, int8=True, directory=blocked / "models")

    provider.warm_up(background=False)

    assert provider.state.value == "ready"
    assert "the embedding model computes in float instead" in caplog.text
    assert f"could not write the int8 embedding model in {blocked}" in caplog.text
    vector = np.array(provider.embed_one(TEXTS[0]))
    assert abs(float(vector @ vector) - 1.0) < 1e-4
