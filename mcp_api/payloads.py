"""JSON shapes the MCP contract promises (see the `memory-write` response schema)."""

from __future__ import annotations

from typing import Any

from memories.models import Memory, MemoryVersion
from memories.public import MEMORY_FIELDS, memory_values, written_values
from memory_platform.timefmt import iso

# Our fields beyond the contract's memory object (the memory-write response schema): they follow
# the contract's fields. Some are left out while unset, to keep payloads short (validity as a pair).
OWN_FIELDS = frozenset({"tags", "version", "valid_from", "valid_until", "superseded_by", "deleted_at", "source"})
CONTRACT_FIELDS = tuple(name for name in MEMORY_FIELDS if name not in OWN_FIELDS)
VALIDITY_FIELDS = frozenset({"valid_from", "valid_until"})
SHOWN_WHEN_SET = frozenset({"superseded_by", "deleted_at", "source"})
# A memory://index entry: lightweight, never the content.
INDEX_FIELDS = (
    "id",
    "title",
    "scope_type",
    "memory_type",
    "importance",
    "status",
    "repository",
    "organization",
    "updated_at",
    "metadata",
    "tags",
    "author",
    "review",
)


def _iso(value: Any) -> str | None:
    return iso(value)


def memory_payload(memory: Memory, **extra: Any) -> dict[str, Any]:
    """The contract's memory object, plus our optional fields after it."""
    values = memory_values(memory)
    payload = {name: values[name] for name in CONTRACT_FIELDS}
    has_validity = bool(memory.valid_from or memory.valid_until)
    for name in MEMORY_FIELDS:
        if name not in OWN_FIELDS or (name in VALIDITY_FIELDS and not has_validity):
            continue
        if name in SHOWN_WHEN_SET and not values[name]:
            continue
        payload[name] = values[name]
    payload.update(extra)
    return payload


def memory_index_payload(memory: Memory) -> dict[str, Any]:
    """The lightweight index entry: never the content."""
    values = memory_values(memory)
    return {name: values[name] for name in INDEX_FIELDS}


def version_payload(version: MemoryVersion) -> dict[str, Any]:
    return {
        "version": version.version,
        "change": version.change,
        "changed_fields": list(version.changed_fields),
        "reason": version.reason,
        "actor": version.actor,
        "created_at": _iso(version.created_at),
        "snapshot": version.snapshot,
    }


def triple_payload(triple: Any) -> dict[str, Any]:
    return {
        "id": triple.pk,
        "subject": triple.subject.name,
        "predicate": triple.predicate,
        "object": triple.object.name,
        "valid_from": _iso(triple.valid_from),
        "valid_to": _iso(triple.valid_to),
        "recorded_at": _iso(triple.recorded_at),
        "expired_at": _iso(triple.expired_at),
        "confidence": triple.confidence,
        "provenance": triple.provenance,
        "invalidation_reason": triple.invalidation_reason or None,
        "memory_id": str(triple.memory_id) if triple.memory_id else None,
    }


def written_payload(memory: Memory) -> dict[str, Any]:
    """A write's answer: the memory, then its ``possible_duplicates``, ``conflicts``, ``notes`` and
    ``suggested_tags``."""
    return memory_payload(memory, **written_values(memory))
