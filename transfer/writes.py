"""Memories from another tool's files written as agents' writes are: through the batch service, so
the organization's write policy screens them (a credential is refused) and each is embedded, with
an idempotency key per source item so that reading the same source again adds only what is new."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from memories.batch import memory_batch_create
from memories.inputs import NewMemory
from memories.models import Memory
from memory_platform.exceptions import DomainError
from organizations.models import Organization
from organizations.principal import Principal


class SourceProblem(Exception):
    """A source refused as a whole (a bad item, or none at all): nothing was written."""


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


def write_checked(
    organization: Organization,
    items: Iterable[tuple[str, Callable[[], dict[str, Any]]]],
    *,
    problem: type[SourceProblem],
    empty: str,
) -> WriteResult:
    """Make every ``(name, make entry)`` item's entry first; any that cannot be made refuses the
    whole source (the first ten named), before anything is written; then write them."""
    entries, problems = [], []
    for name, make in items:
        try:
            entries.append((name, make()))
        except SourceProblem as refused:
            problems.append(f"{name}: {refused}")
    if problems:
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise problem("; ".join(problems[:10]) + more)
    if not entries:
        raise problem(empty)
    return write_entries(organization, entries)


def organization_entry(
    *, memory_type: str, content: str, tags: list[str], metadata: dict[str, Any], key: str
) -> dict[str, Any]:
    """An organization memory's fields as a source item gives them, checked as a write would check
    them (SourceProblem saying what is wrong), with the item's idempotency key."""
    entry: dict[str, Any] = {
        "scope_type": "organization",
        "memory_type": memory_type,
        "current_content": content.strip(),
        "tags": tags[:20],
        "metadata": metadata,
    }
    try:
        NewMemory.parse(entry)
    except DomainError as error:
        raise SourceProblem(error.message) from None
    entry["idempotency_key"] = key[:200]
    return entry
