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
# The index policy agents follow: metadata is a few flat key/value pairs, not a document.
METADATA_MAX_KEYS = 5
METADATA_KEY_MAX_CHARS = 64
METADATA_VALUE_MAX_CHARS = 200


def contains_nul(value: Any) -> bool:
    """Whether a NUL character is anywhere in a value (strings, and keys and items of dicts and lists)."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(contains_nul(key) or contains_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(contains_nul(item) for item in value)
    return False


def without_nul(value: Any, field: str) -> Any:
    """PostgreSQL text cannot hold NUL characters: refuse them anywhere in a value, with its field."""
    if contains_nul(value):
        raise ValidationError(f"{field} contains a NUL character (\\u0000); remove it", details={"field": field})
    return value


# The choices once: an enum's ``values`` builds its list anew at every read (a write reads three).
_SCOPE_TYPES = ScopeType.values
_MEMORY_TYPES = MemoryType.values
_STATUSES = Status.values


def _choice(value: Any, field: str, allowed: list[str]) -> str:
    if not isinstance(value, str) or value not in allowed:
        shown = f"'{value}'" if isinstance(value, str) else repr(value)
        raise ValidationError(f"unknown {field} {shown}; use one of: {', '.join(allowed)}", details={"field": field})
    return value


def scope_type(value: Any) -> str:
    return _choice(value, "scope_type", _SCOPE_TYPES)


def memory_type(value: Any) -> str:
    return _choice(value, "memory_type", _MEMORY_TYPES)


def status(value: Any) -> str:
    return _choice(value, "status", _STATUSES)


def importance(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    else:
        raise ValidationError(
            f"importance must be a whole number from {IMPORTANCE_MIN} to {IMPORTANCE_MAX}, got {value!r}",
            details={"field": "importance"},
        )
    if not IMPORTANCE_MIN <= number <= IMPORTANCE_MAX:
        raise ValidationError(
            f"importance must be from {IMPORTANCE_MIN} to {IMPORTANCE_MAX}, got {number}",
            details={"field": "importance"},
        )
    return number


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
    return str(without_nul(value, "current_content")).strip()


def title(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("title must be non-empty text (or omit it to derive one)", details={"field": "title"})
    text = " ".join(str(without_nul(value, "title")).split())
    if len(text) > TITLE_MAX_CHARS:
        raise ValidationError(
            f"title is {len(text)} characters; keep it to one short sentence (at most {TITLE_MAX_CHARS})",
            details={"field": "title"},
        )
    return text


_MARKUP = re.compile(r"^[\s#>*\-`_]+")
_SENTENCE_END = re.compile(r"[.!?]+(?=\s+\S)")
# Words a period follows without ending the sentence ("e.g. feat/PAY-12", "vs. MySQL").
_ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "etc", "vs", "cf", "approx", "incl", "excl", "esp", "resp", "no", "nr", "fig", "al", "mr", "mrs",
     "ms", "dr", "prof", "st", "jr", "sr", "min", "max", "ca"}
)  # fmt: skip


def first_sentence(line: str) -> str:
    """The line up to the end of its first sentence: a ., ! or ? before the next word, unless the
    period closes an abbreviation or an initial, or the next word goes on in lower case."""
    for end in _SENTENCE_END.finditer(line):
        before = line[: end.start()].split()
        word = before[-1].lower().lstrip("(\"'") if before else ""
        following = line[end.end() :].lstrip()[:1]
        if end.group().startswith(".") and (word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())):
            continue
        if following.islower():
            continue
        return line[: end.end()]
    return line


def derive_title(text: str) -> str:
    """A short title from content: its first sentence, at most twelve words."""
    first_line = next((line for line in text.splitlines() if line.strip()), text)
    first_line = _MARKUP.sub("", first_line).strip()
    sentence = first_sentence(first_line).strip()
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
    return dict(without_nul(value, field))


def metadata(value: Any) -> dict[str, Any]:
    """At most five flat pairs: short keys, each value a short string, a number, true/false or null."""
    pairs = json_object(value, "metadata")
    problem = None
    if len(pairs) > METADATA_MAX_KEYS:
        problem = f"has {len(pairs)} keys; keep at most {METADATA_MAX_KEYS} (put the rest in the content or tags)"
    for key, item in pairs.items():
        if problem:
            break
        if not key.strip() or len(key) > METADATA_KEY_MAX_CHARS:
            problem = f"key '{key[:20]}' must be 1 to {METADATA_KEY_MAX_CHARS} characters"
        elif isinstance(item, dict | list):
            problem = f"'{key}' holds a {type(item).__name__}; values must be flat (text, number, true/false or null)"
        elif isinstance(item, str) and len(item) > METADATA_VALUE_MAX_CHARS:
            problem = f"'{key}' is longer than {METADATA_VALUE_MAX_CHARS} characters; long text belongs in the content"
    if problem:
        raise ValidationError(f"metadata {problem}", details={"field": "metadata"})
    return pairs


def tags(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(tag, str) for tag in value):
        raise ValidationError("tags must be a list of strings", details={"field": "tags"})
    without_nul(value, "tags")
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


def aware_datetime(value: object, field: str) -> datetime | None:
    if value is None or value == "":
        return None
    moment: object = value
    if isinstance(value, str):
        try:
            moment = parse_datetime(value.strip())
        except ValueError:  # well formed but impossible, e.g. February 30th
            moment = None
        if moment is None:
            raise ValidationError(
                f"{field} must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z", details={"field": field}
            )
    if not isinstance(moment, datetime):
        raise ValidationError(f"{field} must be an ISO 8601 date-time", details={"field": field})
    if timezone.is_naive(moment):
        return timezone.make_aware(moment, timezone.get_fixed_timezone(0))
    return moment


def memory_id(value: Any, field: str = "id") -> uuid.UUID:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except (ValueError, AttributeError, TypeError):
        raise ValidationError(
            f"{field} '{value}' is not a valid memory id (a UUID)", details={"field": field}
        ) from None


RANDOM_UUID_VERSIONS = (4, 7)


def new_memory_id(value: uuid.UUID, field: str = "id") -> uuid.UUID:
    """A client-chosen id for a new memory: random (UUID version 4 or 7), never predictable.

    Memory ids are unique across organizations. A predictable id (name-based v3/v5, or v1 from a clock
    and a MAC address) could be claimed first by another organization, and whether it is taken would
    tell that organization something; a random one can be neither guessed nor pre-claimed.
    """
    if value.version not in RANDOM_UUID_VERSIONS:
        raise ValidationError(
            f"{field} '{value}' is a version {value.version or 'unknown'} UUID; a new memory's id must be random "
            "(UUID version 4 or 7). Omit id and the server will choose one, or send an idempotency_key to make "
            "retries safe",
            details={"field": field},
        )
    return value


def idempotency_key(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > IDEMPOTENCY_KEY_MAX_CHARS:
        raise ValidationError(
            f"idempotency_key must be non-empty text of at most {IDEMPOTENCY_KEY_MAX_CHARS} characters",
            details={"field": "idempotency_key"},
        )
    return str(without_nul(value, "idempotency_key")).strip()


def repository_slug(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValidationError("repository must be a repository slug (text)", details={"field": "repository"})
    return str(without_nul(value, "repository")).strip()


def version_number(value: object) -> int:
    """A version of a memory: a whole number from 1."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError("version must be a whole number from 1", details={"field": "version"})
    return value
