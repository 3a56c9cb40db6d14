"""The memory's public fields: one list, in one order, for every place that shows a memory whole.

The MCP payload (mcp_api/payloads.py), the snapshot each version keeps (memories.services
memory_snapshot) and the REST serializer (rest_api/serializers.py MemorySerializer) all take
their fields from ``MEMORY_FIELDS``; a field added here appears in all three (REST refuses to
serialize until it declares the field's type).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memories.hints import Hint, WriteHints
from memories.models import Memory
from memories.trust import author_payload, review_payload
from memory_platform.timefmt import iso

MEMORY_FIELDS: tuple[str, ...] = (
    "id",
    "organization",
    "repository",
    "scope_type",
    "memory_type",
    "title",
    "current_content",
    "status",
    "importance",
    "metadata",
    "tags",
    "version",
    "created_at",
    "updated_at",
    "valid_from",
    "valid_until",
    "superseded_by",
    "deleted_at",
    "source",
    "author",
    "review",
)


def _iso(value: datetime | None) -> str | None:
    return iso(value)


def memory_values(memory: Memory) -> dict[str, Any]:
    """Every public field as JSON: ids and slugs as text, times in ISO 8601, None when unset."""
    return {
        "id": str(memory.id),
        "organization": memory.organization.slug,
        "repository": memory.repository.slug if memory.repository else None,
        "scope_type": memory.scope_type,
        "memory_type": memory.memory_type,
        "title": memory.title,
        "current_content": memory.current_content,
        "status": memory.status,
        "importance": memory.importance,
        "metadata": memory.metadata,
        "tags": list(memory.tags),
        "version": memory.version,
        "created_at": _iso(memory.created_at),
        "updated_at": _iso(memory.updated_at),
        "valid_from": _iso(memory.valid_from),
        "valid_until": _iso(memory.valid_until),
        "superseded_by": str(memory.superseded_by_id) if memory.superseded_by_id else None,
        "deleted_at": _iso(memory.deleted_at),
        "source": memory.source,
        # Who wrote the text as it reads now, and how far curators stand behind it (memories.trust).
        "author": author_payload(memory),
        "review": review_payload(memory),
    }


def hint_values(hint: Hint, *, conflict: bool = False) -> dict[str, Any]:
    values: dict[str, Any] = {"id": str(hint.id), "title": hint.title, "similarity": hint.similarity}
    if conflict:
        values.update(status=hint.status, differences=hint.differences)
    return values


def written_values(memory: Memory) -> dict[str, Any]:
    """What a write's answer adds to the memory, in every interface: the memories of its scope it may
    repeat or contradict, and what the write policy did to it (memories.trust)."""
    hints = memory.write_hints or WriteHints()
    return {
        "possible_duplicates": [hint_values(hint) for hint in hints.possible_duplicates],
        "conflicts": [hint_values(hint, conflict=True) for hint in hints.conflicts],
        "notes": [note.as_dict() for note in memory.write_notes],
        "suggested_tags": list(memory.suggested_tags),
    }
