"""A search's cursor: where the previous page ended, and what that page was scored with.

Built on the one codec of memory_platform.pagination (a browse without a query pages with it
directly); a search cursor adds the scales (``s``), how many results came before (``n``) and the
keyword statistics the first page weighed the query's terms by (``t``), so that a write between
pages moves no score under the cursor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from memories.search.keyword import TermCounts
from memories.search.params import SortKey
from memory_platform.exceptions import ValidationError
from memory_platform.pagination import decode_cursor, encode_cursor, invalid_cursor, is_uuid, is_whole

Scales = tuple[float, float, float, float]  # vector low and spread, keyword low and spread


@dataclass(frozen=True)
class Position:
    """Where the previous page ended, and what the next page reuses to continue it exactly."""

    key: SortKey
    scales: Scales | None
    seen: int
    counts: TermCounts | None = None


def comparable(key: SortKey) -> SortKey:
    # Round the relevance so a key survives its JSON round trip unchanged (and -0.0 is 0.0).
    return (round(key[0], 12) + 0.0, key[1], key[2], str(key[3]))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def search_position(cursor: str, fingerprint: str, words: str = "") -> Position:
    """The position a cursor holds. ``words`` is the digest of the organization's own words the query
    is searched with now (memories.search.words): the first page's must be the same, or the pages
    would not join up."""
    payload = decode_cursor(cursor, fingerprint)
    if payload.get("w", "") != words:
        raise ValidationError(
            "the organization's words (its entities' names and aliases) changed since the first page, so the "
            "pages would not join up; search again without the cursor",
            details={"field": "cursor"},
        )
    key, scales, seen = payload["k"], payload.get("s"), payload.get("n")
    if not (len(key) == 4 and _is_number(key[0]) and is_whole(key[1]) and is_whole(key[2]) and is_uuid(key[3])):
        raise invalid_cursor()
    if not (isinstance(scales, list) and len(scales) == 4 and all(_is_number(x) for x in scales)):
        raise invalid_cursor()
    if not isinstance(seen, int) or isinstance(seen, bool) or seen < 0:
        raise invalid_cursor()
    low_v, spread_v, low_k, spread_k = (float(x) for x in scales)
    return Position(
        key=(float(key[0]), key[1], key[2], key[3]),
        scales=(low_v, spread_v, low_k, spread_k),
        seen=seen,
        counts=_counts(payload.get("t")),
    )


def _counts(value: Any) -> TermCounts | None:
    if value is None:
        return None
    if not (isinstance(value, dict) and set(value) == {"n", "a", "f"}):
        raise invalid_cursor()
    total, average, frequencies = value["n"], value["a"], value["f"]
    if not (is_whole(total) and total >= 0 and _is_number(average) and average > 0 and isinstance(frequencies, dict)):
        raise invalid_cursor()
    if not all(isinstance(lexeme, str) and is_whole(count) and count >= 0 for lexeme, count in frequencies.items()):
        raise invalid_cursor()
    return TermCounts(total, float(average), frequencies)


def search_cursor(  # noqa: PLR0917 - the cursor's fields, in the order it holds them
    fingerprint: str, last: SortKey, scales: Scales, seen: int, counts: TermCounts | None, words: str = ""
) -> str:
    terms = {"n": counts.total, "a": counts.avg_length, "f": counts.frequencies} if counts is not None else None
    extra: dict[str, Any] = {"t": terms} if terms else {}
    if words:
        extra["w"] = words
    return encode_cursor(fingerprint, comparable(last), s=list(scales), n=seen, **extra)
