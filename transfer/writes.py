"""Memories from another tool's files written as agents' writes are: through the batch service, so
the organization's write policy screens them (a credential is refused) and each is embedded, with
an idempotency key per source item so that reading the same source again adds only what is new."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from memories.batch import memory_batch_create
from memories.models import Memory
from organizations.models import Organization
from organizations.principal import Principal


@dataclass
class WriteResult:
    created: int = 0
    existing: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)  # (source item, why)


def write_entries(organization: Organization, entries: Sequence[tuple[str, dict[str, Any]]]) -> WriteResult:
    """Write ``(name, memory fields)`` entries, each with its idempotency key, as the host's operator."""
    result = WriteResult()
    principal = Principal.for_operator(organization, "import")
    chunk = settings.MEMORY_BATCH_MAX_ENTRIES
    for start in range(0, len(entries), chunk):
        part = entries[start : start + chunk]
        keys = [entry["idempotency_key"] for _, entry in part]
        held = Memory.objects.filter(organization=organization, idempotency_key__in=keys)
        before = set(held.values_list("idempotency_key", flat=True))
        answers = memory_batch_create(principal=principal, entries=[entry for _, entry in part])
        for (name, entry), answer in zip(part, answers, strict=True):
            if answer.memory is None:
                result.refused.append((name, answer.error.message if answer.error else "refused"))
            elif entry["idempotency_key"] in before:
                result.existing += 1
            else:
                result.created += 1
    return result
