"""The typed inputs of the memory services: raw client fields parsed once, at the services' edge.

Every interface (MCP, REST, admin, batch) hands the services the fields as the client sent them;
they are parsed here, so a bad value gets the same message whichever way it came in: a create
into a NewMemory, an update into the changes it really makes to the memory (planned_changes).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memories import validation
from memories.models import Memory, ScopeType, Status
from memories.rules import check_scope, check_status_allowed
from memory_platform.exceptions import ValidationError
from organizations.models import Repository
from organizations.principal import Principal

# A memory id as callers hold it (a UUID, or its text from a URL or a tool argument); the
# services parse it and answer a bad one with a ValidationError naming the field.
MemoryId = uuid.UUID | str

# Fields a caller may set; the rest (id, version, timestamps, actors) belong to the platform.
WRITABLE_FIELDS = (
    "scope_type",
    "memory_type",
    "title",
    "current_content",
    "status",
    "importance",
    "metadata",
    "tags",
    "repository",
    "source",
    "valid_from",
    "valid_until",
)


@dataclass(frozen=True)
class NewMemory:
    scope_type: str
    memory_type: str
    current_content: str
    title: str | None
    status: str
    importance: int
    metadata: dict[str, Any]
    tags: list[str]
    repository: str | None
    source: dict[str, Any]
    valid_from: datetime | None
    valid_until: datetime | None

    def fingerprint(self) -> str:
        payload = {k: v.isoformat() if isinstance(v, datetime) else v for k, v in self.__dict__.items()}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()

    @classmethod
    def parse(cls, data: Mapping[str, object]) -> NewMemory:
        """The raw fields of a create, checked once (every message names the field)."""
        unknown = set(data) - set(WRITABLE_FIELDS)
        if unknown:
            raise ValidationError(
                f"unknown field(s): {', '.join(sorted(unknown))}; writable fields are: {', '.join(WRITABLE_FIELDS)}"
            )
        for required in ("scope_type", "memory_type", "current_content"):
            if data.get(required) in (None, ""):
                raise ValidationError(f"{required} is required", details={"field": required})
        new = cls(
            scope_type=validation.scope_type(data["scope_type"]),
            memory_type=validation.memory_type(data["memory_type"]),
            current_content=validation.content(data["current_content"]),
            title=validation.title(data["title"]) if data.get("title") not in (None, "") else None,
            status=validation.status(data.get("status") or Status.DRAFT),
            importance=validation.importance(data["importance"]) if data.get("importance") is not None else 1,
            metadata=validation.metadata(data.get("metadata")),
            tags=validation.tags(data.get("tags")),
            repository=validation.repository_slug(data.get("repository")),
            source=validation.json_object(data.get("source"), "source"),
            valid_from=validation.aware_datetime(data.get("valid_from"), "valid_from"),
            valid_until=validation.aware_datetime(data.get("valid_until"), "valid_until"),
        )
        check_consistency(new.scope_type, new.repository, new.valid_from, new.valid_until)
        return new


def check_consistency(
    scope_type: str, repository: str | Repository | None, valid_from: datetime | None, valid_until: datetime | None
) -> None:
    if scope_type == ScopeType.REPOSITORY and repository is None:
        raise ValidationError(
            "scope_type 'repository' needs a repository slug in 'repository'", details={"field": "repository"}
        )
    if scope_type != ScopeType.REPOSITORY and repository is not None:
        raise ValidationError(
            f"'repository' is only used with scope_type 'repository' (got scope_type '{scope_type}'); "
            "drop the repository or change the scope",
            details={"field": "repository"},
        )
    if valid_from and valid_until and valid_until <= valid_from:
        raise ValidationError("valid_until must be later than valid_from", details={"field": "valid_until"})


# How each field of an update is parsed (None for a field means "leave it", except for the dates).
UPDATE_PARSERS: dict[str, Callable[[Any], Any]] = {
    "scope_type": validation.scope_type,
    "memory_type": validation.memory_type,
    "title": validation.title,
    "current_content": validation.content,
    "status": validation.status,
    "importance": validation.importance,
    "metadata": validation.metadata,
    "tags": validation.tags,
    "source": lambda v: validation.json_object(v, "source"),
    "valid_from": lambda v: validation.aware_datetime(v, "valid_from"),
    "valid_until": lambda v: validation.aware_datetime(v, "valid_until"),
}


def _current_value(memory: Memory, field: str) -> object:
    # The repository is planned by slug: it is created (if new) only when the change is written.
    if field == "repository":
        return memory.repository.slug if memory.repository else None
    return getattr(memory, field)


def planned_changes(principal: Principal, memory: Memory, data: Mapping[str, object]) -> dict[str, Any]:
    """The fields ``data`` really changes on ``memory``, parsed and checked (the repository as a slug)."""
    changes: dict[str, Any] = {}
    for field, raw in data.items():
        if field == "repository":
            slug = validation.repository_slug(raw)
            if slug != _current_value(memory, "repository"):
                changes["repository"] = slug
            continue
        if raw is None and field not in ("valid_from", "valid_until"):
            continue
        value = UPDATE_PARSERS[field](raw)
        if getattr(memory, field) != value:
            changes[field] = value

    # A title the platform derived follows the content; one a person wrote stays.
    title_was_derived = memory.title == validation.derive_title(memory.current_content)
    if "current_content" in changes and "title" not in data and title_was_derived:
        changes["title"] = validation.derive_title(changes["current_content"])
    if "status" in changes:
        check_status_allowed(principal, changes["status"], memory.status)
    if "scope_type" in changes:
        check_scope(principal, changes["scope_type"])
        if changes["scope_type"] != ScopeType.REPOSITORY and "repository" not in changes:
            changes["repository"] = None
        changes["owner"] = principal.user if changes["scope_type"] == ScopeType.USER else None
    check_consistency(
        changes.get("scope_type", memory.scope_type),
        changes.get("repository", memory.repository),
        changes.get("valid_from", memory.valid_from),
        changes.get("valid_until", memory.valid_until),
    )
    return {k: v for k, v in changes.items() if _current_value(memory, k) != v}
