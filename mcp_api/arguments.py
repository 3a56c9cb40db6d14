"""The argument types MCP tools share: each annotation is the schema and the description the agent sees."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from memories.models import MemoryType, ScopeType, Status
from memories.search import MAX_RESULTS


def enum_arg(values: list[str], description: str) -> Any:
    return Field(description=description, json_schema_extra={"enum": list[Any](values)})


ScopeArg = Annotated[
    str, enum_arg(ScopeType.values, "Who the memory is for: system, organization, repository or user.")
]


TypeArg = Annotated[str, enum_arg(MemoryType.values, "What kind of knowledge this is.")]


StatusArg = Annotated[str, enum_arg(Status.values, "Workflow status. Agents may set draft or active.")]


OrganizationArg = Annotated[
    str | None,
    Field(
        description=(
            "Optional: your organization's slug. Your token decides the organization; a slug that is not "
            "your token's is refused (see platform-status)."
        )
    ),
]


MemoryId = Annotated[str, Field(description="The memory's id (UUID).")]


Metadata = Annotated[
    dict[str, Any] | None, Field(description='Flat key/value pairs, at most 5 keys (e.g. {"ticket": "PAY-12"}).')
]


Tags = Annotated[list[str] | None, Field(description='A few lowercase labels, e.g. ["payments", "deploy"].')]
# Ranges are advertised in the schema but checked by the services, whose messages say what to send
# (the MCP library's own validation errors name internal classes).


Importance = Annotated[
    int | None, Field(description="1 (nice to know) to 10 (critical).", json_schema_extra={"minimum": 1, "maximum": 10})
]


FILTERS_DESCRIPTION = (
    "Optional filters: repository (slug; also returns organization and system memories), memory_type "
    "(one or a list), status (one or a list; deprecated memories are left out unless asked for), scope_type, "
    "metadata (all given key/values must match), tags (all must be present), min_importance, include_deleted, "
    "valid_at (ISO 8601: what was valid then; default now) or include_expired (memories outside their validity too), "
    "mentions (a name: memories that mention it, or the entity known by it under any of its names or aliases)."
)


Filters = Annotated[dict[str, Any] | None, Field(description=FILTERS_DESCRIPTION)]


ValidAt = Annotated[
    str | None,
    Field(
        description=(
            "ISO 8601 date-time, e.g. 2026-03-01T00:00:00Z: show what was valid at that moment "
            "(valid_from <= it < valid_until). Default: now, so expired memories are left out."
        )
    ),
]


IncludeExpired = Annotated[bool, Field(description="Also show memories outside their validity window.")]


def with_validity(filters: dict[str, Any] | None, valid_at: str | None, include_expired: bool) -> dict[str, Any]:
    """The top-level validity arguments folded into the filters (where the selectors read them)."""
    merged = dict(filters or {})
    if valid_at is not None:
        merged["valid_at"] = valid_at
    if include_expired:
        merged["include_expired"] = True
    return merged


LimitArg = Annotated[
    int | None,
    Field(
        description="How many results (default 50, at most 1000).",
        json_schema_extra={"minimum": 1, "maximum": MAX_RESULTS},
    ),
]


CursorArg = Annotated[str | None, Field(description="The next_cursor of a previous call, to get the next page.")]
