"""A deterministic stand-in for the embedding model, for tests that are not about retrieval.

Running all-MiniLM-L6-v2 costs milliseconds per text and a model load per process; most tests only
need *a* unit vector per text. ``HashEmbedder`` hashes the words of a text (and, more lightly, their
character trigrams) into 384 buckets and normalises the sum: the same text always gets the same
vector, texts sharing words are near, near-identical texts are very near, and no model is loaded.

It is installed per test by the ``embedding_provider`` fixture of tests/conftest.py and is never a
product setting. Tests about search quality, ranking or the model itself are marked
``real_embedder`` (or live in a directory that is) and get the real model.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

from memories.embeddings.base import EmbeddingProvider, ModelState

DIMENSIONS = 384
WORD = re.compile(r"\w+")
TRIGRAM_WEIGHT = 0.3


def _bucket(feature: str) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    number = int.from_bytes(digest, "little")
    # A signed bucket keeps unrelated features from all adding up in the same direction.
    return number % DIMENSIONS, 1.0 if number >> 63 else -1.0


def hash_vector(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in WORD.findall(text.lower()):
        index, sign = _bucket(word)
        vector[index] += sign
        padded = f"#{word}#"
        for start in range(len(padded) - 2):
            index, sign = _bucket(padded[start : start + 3])
            vector[index] += sign * TRIGRAM_WEIGHT
    norm = math.sqrt(sum(value * value for value in vector))
    if norm == 0.0:
        # No words at all: still a unit vector (a zero vector has no cosine distance).
        vector[0], norm = 1.0, 1.0
    return [value / norm for value in vector]


class HashEmbedder(EmbeddingProvider):
    """Unit vectors from hashed words: deterministic, instant, 384 dimensions like the real model."""

    name = "test-hash-embedder"
    dimensions = DIMENSIONS

    def __init__(self) -> None:
        super().__init__()
        self._set_state(ModelState.READY)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [hash_vector(text) for text in texts]
