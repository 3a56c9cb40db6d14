"""The memory tools that write: write, update, delete, link, batch-write, invalidate."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from knowledge.links import link_create
from mcp_api.arguments import (
    Importance,
    MemoryId,
    Metadata,
    OrganizationArg,
    ScopeArg,
    Tags,
    TypeArg,
    enum_arg,
)
from mcp_api.payloads import memory_payload, written_payload
from mcp_api.server import tool
from memories import decisions, services
from memories.batch import memory_batch_create
from memories.models import MemoryType, ScopeType, Status
from organizations.principal import Principal


def _write_data(**fields: Any) -> dict[str, Any]:
    return {name: value for name, value in fields.items() if value is not None}


@tool(
    "memory-write",
    title="Write a memory",
    description=(
        "Create one memory: a single fact, rule, decision or preference. Search first to avoid duplicates. "
        "With `id`, updates that memory if it exists (upsert) or creates it with that id (a random UUID). "
        "Pass `idempotency_key` to make retries safe: the same key with the same content returns the memory "
        "created the first time. Returns the memory as JSON with its `author` and `review` ({state: unreviewed, "
        "verified or locked, by, at, flags}), and `possible_duplicates`: up to three memories of the same scope "
        "that say nearly the same ({id, title, similarity}). If one says what you meant, update it (memory-update) "
        "and delete or merge (memory-consolidate) the new one instead of keeping both. `conflicts` lists memories "
        "this one contradicts (a time, number, name or negation differs); curators are asked to decide. `notes` "
        "says what the organization's write policy did: below the curator role, types that need review, pins "
        "and text addressed to other agents are stored as drafts, and importance is capped. `suggested_tags`: "
        "tags that memories mentioning the same names wear and this one does not; add those that fit "
        "(memory-update). Never write "
        "credentials: a key, token or password is refused (or redacted, if the organization says so); write "
        "where the secret is kept instead."
    ),
)
def memory_write(
    principal: Principal,
    *,
    scope_type: ScopeArg,
    memory_type: TypeArg,
    current_content: Annotated[str, Field(description="The knowledge itself, one concept, in plain words.")],
    id: Annotated[
        str | None,
        Field(
            description=(
                "Optional UUID: update this memory if it exists, else create it with this id "
                "(a new id must be random: UUID version 4 or 7)."
            )
        ),
    ] = None,
    repository: Annotated[
        str | None,
        Field(
            description=(
                "Slug of one of your organization's repositories (platform-status lists them); required with "
                "scope_type repository. An unknown slug is refused with the known ones listed."
            )
        ),
    ] = None,
    create_repository: Annotated[
        bool, Field(description="Create `repository` if your organization has none with that slug yet.")
    ] = False,
    title: Annotated[str | None, Field(description="One short sentence (max 12 words); derived if omitted.")] = None,
    status: Annotated[
        str, enum_arg(Status.values, "draft (default) or active; curators also verified/locked.")
    ] = "draft",
    importance: Annotated[
        int, Field(description="1 (default) to 10.", json_schema_extra={"minimum": 1, "maximum": 10})
    ] = 1,
    metadata: Metadata = None,
    tags: Tags = None,
    idempotency_key: Annotated[str | None, Field(description="Client key that makes retries safe.")] = None,
    organization: OrganizationArg = None,
) -> dict[str, Any]:
    memory, _ = services.memory_create(
        principal=principal,
        organization=organization,
        memory_id=id,
        idempotency_key=idempotency_key,
        create_repository=create_repository,
        data=_write_data(
            scope_type=scope_type,
            memory_type=memory_type,
            current_content=current_content,
            repository=repository,
            title=title,
            status=status,
            importance=importance,
            metadata=metadata,
            tags=tags,
        ),
    )
    return written_payload(memory)


@tool(
    "memory-update",
    title="Update a memory",
    description=(
        "Change an existing memory by id. Only the fields you send change; sending the same values again "
        "changes nothing. Locked memories can only be changed by curators; a superseded memory cannot be changed "
        "(the error names the memory that replaced it). A change to a verified memory makes it unreviewed again "
        "until a curator looks. Returns the memory as JSON, with `notes` on what the write policy did."
    ),
    idempotent=True,
)
def memory_update(
    principal: Principal,
    *,
    id: MemoryId,
    title: str | None = None,
    current_content: str | None = None,
    status: Annotated[str | None, enum_arg(Status.values, "New status. Agents may set draft or active.")] = None,
    scope_type: Annotated[str | None, enum_arg(ScopeType.values, "New scope.")] = None,
    memory_type: Annotated[str | None, enum_arg(MemoryType.values, "New type.")] = None,
    importance: Importance = None,
    metadata: Metadata = None,
    tags: Tags = None,
    repository: Annotated[str | None, Field(description="Repository slug (with scope_type repository).")] = None,
    reason: Annotated[str | None, Field(description="Why it changed; kept in the version history.")] = None,
) -> dict[str, Any]:
    data = _write_data(
        title=title,
        current_content=current_content,
        status=status,
        scope_type=scope_type,
        memory_type=memory_type,
        importance=importance,
        metadata=metadata,
        tags=tags,
        repository=repository,
    )
    memory = services.memory_update(principal=principal, memory_id=id, data=data, reason=reason or "")
    return memory_payload(memory, notes=[note.as_dict() for note in memory.write_notes])


@tool(
    "memory-delete",
    title="Delete a memory",
    description=(
        "Soft-delete a memory: it leaves search and lists but stays in the history. Use only for information "
        "that is wrong or fully obsolete; prefer memory-invalidate when a newer memory replaces it."
    ),
    destructive=True,
    idempotent=True,
)
def memory_delete(principal: Principal, id: MemoryId) -> str:
    memory = decisions.memory_delete(principal=principal, memory_id=id)
    return f"Memory {memory.id} has been soft-deleted."


@tool(
    "memory-link",
    title="Link two memories",
    description=(
        "Record an explicit relation between two memories of your organization, e.g. one rule depends on "
        "another. Linking the same pair twice changes nothing. Relation types: related (default), depends_on, "
        "supersedes, contradicts, derived_from, part_of."
    ),
    idempotent=True,
)
def memory_link(
    principal: Principal,
    *,
    source_id: Annotated[str, Field(description="The memory the relation starts from (UUID).")],
    target_id: Annotated[str, Field(description="The memory it points to (UUID).")],
    relation_type: Annotated[
        str,
        enum_arg(
            ["related", "depends_on", "supersedes", "contradicts", "derived_from", "part_of"], "Kind of relation."
        ),
    ] = "related",
) -> str:
    link, _ = link_create(principal=principal, source_id=source_id, target_id=target_id, relation_type=relation_type)
    return f"Memories linked successfully as '{link.relation_type}'."


@tool(
    "memory-batch-write",
    title="Write several memories",
    description=(
        "Create several distinct memories at once (e.g. the facts learned in one session). Each entry takes "
        "the memory-write arguments and is validated on its own: good entries are stored even if others fail. "
        "Returns one result per entry, in order: {index, ok, memory} or {index, ok: false, error}; each memory "
        "lists its possible_duplicates like memory-write."
    ),
)
def memory_batch_write(
    principal: Principal,
    *,
    memories: Annotated[
        list[dict[str, Any]],
        Field(
            description=(
                "Memory objects with the memory-write fields (scope_type, memory_type, current_content…, "
                "and optionally id, idempotency_key, create_repository)."
            )
        ),
    ],
    organization: Annotated[str | None, Field(description="Your organization's slug (optional).")] = None,
) -> list[dict[str, Any]]:
    results = memory_batch_create(principal=principal, entries=memories, organization=organization)
    return [
        {"index": result.index, "ok": True, "memory": written_payload(result.memory)}
        if result.memory is not None
        else {"index": result.index, "ok": False, "error": result.error.message if result.error else "failed"}
        for result in results
    ]


@tool(
    "memory-invalidate",
    title="Invalidate a memory",
    description=(
        "Record that a memory is no longer true: it is deprecated, its validity ends now, and it can point to "
        "the memory that replaces it (`superseded_by`). The reason is kept in its history."
    ),
)
def memory_invalidate(
    principal: Principal,
    *,
    id: MemoryId,
    reason: Annotated[str, Field(description="Why it is no longer true.")],
    superseded_by: Annotated[str | None, Field(description="Id of the memory that replaces it.")] = None,
) -> dict[str, Any]:
    memory = decisions.memory_invalidate(principal=principal, memory_id=id, reason=reason, superseded_by=superseded_by)
    return memory_payload(memory)
