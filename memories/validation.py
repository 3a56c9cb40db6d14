"""Parsing and checking of memory fields. Every message names the field and says what to send."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memories.models import IMPORTANCE_MAX, IMPORTANCE_MIN, MemoryType, ScopeType, Status
from memory_platform.exceptions import ValidationError

CONTENT_MAX_CHARS = 100_000
TITLE_MAX_CHARS = 255
TITLE_MAX_WORDS = 12
TAG_MAX_CHARS = 64
TAGS_MAX = 32
IDEMPOTENCY_KEY_MAX_CHARS = 200


def _choice(value: Any, field: str, allowed: list[str]) -> str:
    if not isinstance(value, str) or value not in allowed:
        shown = f"'{value}'" if isinstance(value, str) else repr(value)
        raise ValidationError(f"unknown {field} {shown}; use one of: {', '.join(allowed)}", details={"field": field})
    return value


def scope_type(value: Any) -> str:
    return _choice(value, "scope_type", ScopeType.values)


def memory_type(value: Any) -> str:
    return _choice(value, "memory_type", MemoryType.values)


def status(value: Any) -> str:
    return _choice(value, "status", Status.values)


def importance(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        else:
            raise ValidationError(
                f"importance must be a whole number from {IMPORTANCE_MIN} to {IMPORTANCE_MAX}, got {value!r}",
                details={"field": "importance"},
            )
    if not IMPORTANCE_MIN <= value <= IMPORTANCE_MAX:
        raise ValidationError(
            f"importance must be from {IMPORTANCE_MIN} to {IMPORTANCE_MAX}, got {value}",
            details={"field": "importance"},
        )
    return value


def content(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(
            "current_content is required and must be non-empty text", details={"field": "current_content"}
        )
    if len(value) > CONTENT_MAX_CHARS:
        raise ValidationError(
            f"current_content is {len(value)} characters; the limit is {CONTENT_MAX_CHARS}. "
            "Store one concept per memory and split long documents.",
            details={"field": "current_content"},
        )
    return value.strip()


def title(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("title must be non-empty text (or omit it to derive one)", details={"field": "title"})
    value = " ".join(value.split())
    if len(value) > TITLE_MAX_CHARS:
        raise ValidationError(
            f"title is {len(value)} characters; keep it to one short sentence (at most {TITLE_MAX_CHARS})",
            details={"field": "title"},
        )
    return value


_MARKUP = re.compile(r"^[\s#>*\-`_]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def derive_title(text: str) -> str:
    """A short title from content: its first sentence, at most twelve words."""
    first_line = next((line for line in text.splitlines() if line.strip()), text)
    first_line = _MARKUP.sub("", first_line).strip()
    sentence = _SENTENCE_END.split(first_line, maxsplit=1)[0].strip()
    words = sentence.split()
    truncated = len(words) > TITLE_MAX_WORDS
    derived = " ".join(words[:TITLE_MAX_WORDS]) + "…" if truncated else " ".join(words).rstrip(".")
    return (derived or "Untitled")[:TITLE_MAX_CHARS]


def json_object(value: Any, field: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValidationError(
            f"{field} must be a JSON object (key/value pairs), got {type(value).__name__}", details={"field": field}
        )
    return value


def tags(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(tag, str) for tag in value):
        raise ValidationError("tags must be a list of strings", details={"field": "tags"})
    cleaned: list[str] = []
    for raw in value:
        tag = raw.strip().lower()
        if not tag:
            continue
        if len(tag) > TAG_MAX_CHARS:
            raise ValidationError(
                f"tag '{tag[:20]}…' is longer than {TAG_MAX_CHARS} characters", details={"field": "tags"}
            )
        if tag not in cleaned:
            cleaned.append(tag)
    if len(cleaned) > TAGS_MAX:
        raise ValidationError(f"at most {TAGS_MAX} tags per memory", details={"field": "tags"})
    return cleaned


def aware_datetime(value: Any, field: str) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            parsed = parse_datetime(value.strip())
        except ValueError:  # well formed but impossible, e.g. February 30th
            parsed = None
        if parsed is None:
            raise ValidationError(
                f"{field} must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z", details={"field": field}
            )
        value = parsed
    if not isinstance(value, datetime):
        raise ValidationError(f"{field} must be an ISO 8601 date-time", details={"field": field})
    if timezone.is_naive(value):
        value = timezone.make_aware(value, timezone.get_fixed_timezone(0))
    return value


def memory_id(value: Any, field: str = "id") -> uuid.UUID:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except (ValueError, AttributeError, TypeError):
        raise ValidationError(
            f"{field} '{value}' is not a valid memory id (a UUID)", details={"field": field}
        ) from None


def idempotency_key(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > IDEMPOTENCY_KEY_MAX_CHARS:
        raise ValidationError(
            f"idempotency_key must be non-empty text of at most {IDEMPOTENCY_KEY_MAX_CHARS} characters",
            details={"field": "idempotency_key"},
        )
    return value.strip()


def repository_slug(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValidationError("repository must be a repository slug (text)", details={"field": "repository"})
    return value.strip()
