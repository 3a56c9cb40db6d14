"""JSON shapes the MCP contract promises (see the `memory-write` response schema)."""

from __future__ import annotations

from typing import Any

from memories.models import Memory, MemoryVersion


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def memory_payload(memory: Memory, **extra: Any) -> dict[str, Any]:
    """The contract's memory object, plus our optional fields after it."""
    payload: dict[str, Any] = {
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
        "created_at": _iso(memory.created_at),
        "updated_at": _iso(memory.updated_at),
        "tags": list(memory.tags),
        "version": memory.version,
    }
    if memory.valid_from or memory.valid_until:
        payload["valid_from"] = _iso(memory.valid_from)
        payload["valid_until"] = _iso(memory.valid_until)
    if memory.superseded_by_id:
        payload["superseded_by"] = str(memory.superseded_by_id)
    if memory.deleted_at:
        payload["deleted_at"] = _iso(memory.deleted_at)
    if memory.source:
        payload["source"] = memory.source
    payload.update(extra)
    return payload


def memory_index_payload(memory: Memory) -> dict[str, Any]:
    """The lightweight index entry: never the content."""
    return {
        "id": str(memory.id),
        "title": memory.title,
        "scope_type": memory.scope_type,
        "memory_type": memory.memory_type,
        "importance": memory.importance,
        "status": memory.status,
        "repository": memory.repository.slug if memory.repository else None,
        "organization": memory.organization.slug,
        "updated_at": _iso(memory.updated_at),
        "metadata": memory.metadata,
        "tags": list(memory.tags),
    }


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
