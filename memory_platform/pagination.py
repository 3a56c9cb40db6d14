"""Keyset pages and the one opaque cursor codec every list and search uses.

A page is the rows after the last one the caller saw, in a total order (the ordering always ends
in a unique field), fetched ``limit + 1`` at a time to know whether more follow. Unlike an
offset, a keyset cursor does not skip or repeat rows when others are written between pages.

A cursor is base64 JSON: ``{"f": fingerprint, "k": key, ...}``. The fingerprint names the listing
(its filters, order and page size), so a cursor passed to another listing is refused with a
message saying so instead of silently paging something else. It is opaque to callers but readable
by us, so every part is checked: a tampered cursor is refused, not a crash.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from operator import or_
from typing import Any, Generic, TypeVar

from django.db.models import Model, Q, QuerySet

from memory_platform.exceptions import ValidationError

T = TypeVar("T", bound=Model)


def fingerprint(value: Any) -> str:
    """A short, stable digest of what a listing or search was asked for."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def check_limit(limit: Any, maximum: int) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise ValidationError(f"limit must be a whole number from 1 to {maximum}", details={"field": "limit"})


# --- the codec ----------------------------------------------------------------------------------


def invalid_cursor() -> ValidationError:
    return ValidationError(
        "cursor is not valid; pass back the next_cursor of a previous page unchanged", details={"field": "cursor"}
    )


def encode_cursor(fingerprint: str, key: Sequence[Any], **extra: Any) -> str:
    raw = json.dumps({"f": fingerprint, "k": list(key), **extra}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, fingerprint: str) -> dict[str, Any]:
    """The cursor's payload; its key ``k`` is a list, still to be checked by the caller."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        payload = json.loads(raw)
        stored_fingerprint = payload["f"]
        if not isinstance(payload["k"], list):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        raise invalid_cursor() from None
    if stored_fingerprint != fingerprint:
        raise ValidationError(
            "cursor belongs to a different search; repeat the same query, filters and limit with it",
            details={"field": "cursor"},
        )
    return dict(payload)


def is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_uuid(value: Any) -> bool:
    try:
        uuid.UUID(value)
    except (TypeError, ValueError, AttributeError):
        return False
    return True


# --- keysets ------------------------------------------------------------------------------------


class Kind(enum.Enum):
    """How a key field travels in a cursor's JSON, and how it is checked on the way back."""

    WHOLE = "whole"
    MOMENT = "moment"  # an aware datetime, as ISO 8601
    UUID = "uuid"
    TEXT = "text"

    def dump(self, value: Any) -> Any:
        if self is Kind.MOMENT:
            return value.isoformat()
        return str(value) if self is Kind.UUID else value

    def load(self, value: Any) -> Any:
        if self is Kind.WHOLE and is_whole(value):
            return value
        if self is Kind.UUID and is_uuid(value):
            return value
        if self is Kind.TEXT and isinstance(value, str):
            return value
        if self is Kind.MOMENT and isinstance(value, str):
            try:
                moment = datetime.fromisoformat(value)
            except ValueError:
                raise invalid_cursor() from None
            if moment.tzinfo is not None:
                return moment
        raise invalid_cursor()


@dataclass(frozen=True)
class Keyset:
    """A total order: ``(field, kind)`` pairs, ``-field`` for descending; the last must be unique."""

    fields: tuple[tuple[str, Kind], ...]

    @classmethod
    def of(cls, *fields: tuple[str, Kind]) -> Keyset:
        return cls(fields=fields)

    def order_by(self) -> list[str]:
        return [name for name, _ in self.fields]

    def key_of(self, row: Model) -> list[Any]:
        return self.dump([getattr(row, name.lstrip("-")) for name, _ in self.fields])

    def dump(self, key: Sequence[Any]) -> list[Any]:
        """A key (a row's values, or one ``load`` checked) as a cursor carries it."""
        return [kind.dump(value) for (_, kind), value in zip(self.fields, key, strict=True)]

    def load(self, key: list[Any]) -> list[Any]:
        if len(key) != len(self.fields):
            raise invalid_cursor()
        return [kind.load(value) for (_, kind), value in zip(self.fields, key, strict=True)]

    def after(self, key: Sequence[Any]) -> Q:
        """Rows strictly after ``key`` in this order: equal on a prefix, then beyond on the next field."""
        clauses = []
        for position, (name, _) in enumerate(self.fields):
            equal = {field.lstrip("-"): value for (field, _), value in zip(self.fields[:position], key, strict=False)}
            beyond = f"{name.lstrip('-')}__{'lt' if name.startswith('-') else 'gt'}"
            clauses.append(Q(**equal, **{beyond: key[position]}))
        return reduce(or_, clauses)


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    # The key of the last item when more follow (JSON-ready), else None.
    last_key: list[Any] | None


def keyset_page(queryset: QuerySet[T], keyset: Keyset, *, limit: int, after: Sequence[Any] | None) -> Page[T]:
    """The page selector: up to ``limit`` rows after ``after`` (an already checked key) in ``keyset`` order."""
    if after is not None:
        queryset = queryset.filter(keyset.after(after))
    rows = list(queryset.order_by(*keyset.order_by())[: limit + 1])
    items = rows[:limit]
    return Page(items=items, last_key=keyset.key_of(items[-1]) if len(rows) > limit else None)


@dataclass(frozen=True)
class CursorPage(Generic[T]):
    items: list[T]
    next_cursor: str | None


def cursor_page(
    queryset: QuerySet[T], keyset: Keyset, *, limit: int, cursor: str | None, fingerprint: str
) -> CursorPage[T]:
    """A keyset page behind an opaque cursor (see the module docstring)."""
    after = keyset.load(decode_cursor(cursor, fingerprint)["k"]) if cursor else None
    page = keyset_page(queryset, keyset, limit=limit, after=after)
    next_cursor = encode_cursor(fingerprint, page.last_key) if page.last_key is not None else None
    return CursorPage(items=page.items, next_cursor=next_cursor)
