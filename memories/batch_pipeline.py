"""A batch's new memories cut into chunks, embedded ahead of their writes (memories.batch): all of
them queued for the model at once, each chunk written as soon as its vectors are there, and the
chunks that are ready by then written with it."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TypeVar

from memories.embedding_pipeline import embed_texts_later
from memories.services import Vector

Item = TypeVar("Item")

# The pipeline's chunks. The writes wait for the first chunk's vectors, and the last chunk is
# written after every embedding has finished, so both are small; the ones between are as large as
# the batch allows (fewer statements).
PIPELINE_FIRST_CHUNK = 8
PIPELINE_LAST_CHUNK = 8
PIPELINE_CHUNK = 32


def pipeline_chunks(bulk: list[Item]) -> list[list[Item]]:
    """Split the batch's new memories into the chunks inserted one after another."""
    if len(bulk) <= PIPELINE_FIRST_CHUNK + PIPELINE_LAST_CHUNK:
        return [bulk] if bulk else []
    first, middle, last = (
        bulk[:PIPELINE_FIRST_CHUNK],
        bulk[PIPELINE_FIRST_CHUNK:-PIPELINE_LAST_CHUNK],
        bulk[-PIPELINE_LAST_CHUNK:],
    )
    count = -(-len(middle) // PIPELINE_CHUNK)
    size = -(-len(middle) // count)
    return [first, *(middle[start : start + size] for start in range(0, len(middle), size)), last]


def ready_chunks(
    chunks: list[list[Item]], embedding: list[Stage], vector_for: dict[int, Vector]
) -> Iterator[list[Item]]:
    """The chunks in order, each once its vectors are in ``vector_for`` (waited for outside any
    transaction). The chunks after it whose vectors are there already (the model was quicker than
    the writes) come with it, to be written in the same transaction: fewer commits."""
    number = 0
    while number < len(chunks):
        ready = number + 1
        while ready < len(chunks) and embedding[ready].done():
            ready += 1
        for stage in embedding[number:ready]:
            vector_for.update(stage())
        yield [item for part in chunks[number:ready] for item in part]
        number = ready


class Stage:
    """Some entries' texts being embedded: called, it waits for their vectors (None each while the
    provider is down); ``done()`` says whether a call would return at once."""

    def __init__(self, texts: dict[int, str], indices: list[int]) -> None:
        self.indices = indices
        self.later = embed_texts_later([texts[index] for index in indices])

    def done(self) -> bool:
        return self.later.done()

    @functools.cached_property
    def vectors(self) -> dict[int, Vector]:
        embedded = self.later()
        found: list[Vector] = list(embedded) if embedded is not None else [None for _ in self.indices]
        return dict(zip(self.indices, found, strict=True))

    def __call__(self) -> dict[int, Vector]:
        return self.vectors


def embed_later(texts: dict[int, str], indices: list[int]) -> Stage:
    """Start embedding these entries' texts."""
    return Stage(texts, indices)
