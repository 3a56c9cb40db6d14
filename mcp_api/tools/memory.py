"""The memory tools of the MCP contract, and the reading tools taken from the other designs."""

from __future__ import annotations

from typing import Annotated, Any

from django.conf import settings
from pydantic import Field

from knowledge.services import link_create
from lifecycle.selectors import possible_duplicates
from mcp_api.payloads import hints_payload, memory_payload, version_payload
from mcp_api.server import ToolOutput, tool
from memories import selectors, services
from memories.batch import memory_batch_create
from memories.models import MemoryType, ScopeType, Status
from memories.search import MAX_RESULTS, SearchMode, SearchPage, SearchParams, memory_search
from memory_platform.exceptions import ValidationError
from memory_platform.pagination import check_limit
from organizations.principal import Principal


def _enum(values: list[str], description: str) -> Any:
    return Field(description=description, json_schema_extra={"enum": list[Any](values)})


ScopeArg = Annotated[str, _enum(ScopeType.values, "Who the memory is for: system, organization, repository or user.")]
TypeArg = Annotated[str, _enum(MemoryType.values, "What kind of knowledge this is.")]
StatusArg = Annotated[str, _enum(Status.values, "Workflow status. Agents may set draft or active.")]
OrganizationArg = Annotated[
    str, Field(description="Your organization's slug (must match your token; see platform-status).")
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
    "valid_at (ISO 8601: what was valid then; default now) or include_expired (memories outside their validity too)."
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


def _validity(filters: dict[str, Any] | None, valid_at: str | None, include_expired: bool) -> dict[str, Any]:
    """The top-level validity arguments folded into the filters (where the selectors read them)."""
    merged = dict(filters or {})
    if valid_at is not None:
        merged["valid_at"] = valid_at
    if include_expired:
        merged["include_expired"] = True
    return merged


def _write_data(**fields: Any) -> dict[str, Any]:
    return {name: value for name, value in fields.items() if value is not None}


@tool(
    "memory-write",
    title="Write a memory",
    description=(
        "Create one memory: a single fact, rule, decision or preference. Search first to avoid duplicates. "
        "With `id`, updates that memory if it exists (upsert) or creates it with that id. "
        "Pass `idempotency_key` to make retries safe: the same key with the same content returns the memory "
        "created the first time. Returns the memory as JSON, with `possible_duplicates`: up to three memories of "
        "the same scope that say nearly the same ({id, title, similarity}). If one says what you meant, update "
        "it (memory-update) and delete or merge (memory-consolidate) the new one instead of keeping both."
    ),
)
def memory_write(
    principal: Principal,
    *,
    organization: OrganizationArg,
    scope_type: ScopeArg,
    memory_type: TypeArg,
    current_content: Annotated[str, Field(description="The knowledge itself, one concept, in plain words.")],
    id: Annotated[
        str | None, Field(description="Optional UUID: update this memory if it exists, else create it.")
    ] = None,
    repository: Annotated[
        str | None, Field(description="Repository slug; required with scope_type repository.")
    ] = None,
    title: Annotated[str | None, Field(description="One short sentence (max 12 words); derived if omitted.")] = None,
    status: Annotated[str, _enum(Status.values, "draft (default) or active; curators also verified/locked.")] = "draft",
    importance: Annotated[
        int, Field(description="1 (default) to 10.", json_schema_extra={"minimum": 1, "maximum": 10})
    ] = 1,
    metadata: Metadata = None,
    tags: Tags = None,
    idempotency_key: Annotated[str | None, Field(description="Client key that makes retries safe.")] = None,
) -> dict[str, Any]:
    memory, _ = services.memory_create(
        principal=principal,
        organization=organization,
        memory_id=id,
        idempotency_key=idempotency_key,
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
    return memory_payload(memory, possible_duplicates=hints_payload(possible_duplicates([memory])[memory.pk]))


@tool(
    "memory-update",
    title="Update a memory",
    description=(
        "Change an existing memory by id. Only the fields you send change; sending the same values again "
        "changes nothing. Locked memories can only be changed by curators. Returns the memory as JSON."
    ),
    idempotent=True,
)
def memory_update(
    principal: Principal,
    *,
    id: MemoryId,
    title: str | None = None,
    current_content: str | None = None,
    status: Annotated[str | None, _enum(Status.values, "New status. Agents may set draft or active.")] = None,
    scope_type: Annotated[str | None, _enum(ScopeType.values, "New scope.")] = None,
    memory_type: Annotated[str | None, _enum(MemoryType.values, "New type.")] = None,
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
    return memory_payload(memory)


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
    memory = services.memory_delete(principal=principal, memory_id=id)
    return f"Memory {memory.id} has been soft-deleted."


def _search_output(page: SearchPage, *, with_content: bool = True) -> ToolOutput:
    results = []
    for hit in page.hits:
        extra: dict[str, Any] = {"relevance": hit.relevance}
        if hit.vector_similarity is not None:
            extra["similarity"] = hit.vector_similarity
        results.append(memory_payload(hit.memory, **extra))
    blocks: list[Any] = [results]
    if page.next_cursor:
        blocks.append({"next_cursor": page.next_cursor})
    if page.degraded:
        blocks.append({"warning": page.degraded})
    return ToolOutput(blocks=blocks)


def _search(
    principal: Principal,
    *,
    query: str | None,
    filters: dict[str, Any] | None,
    mode: str,
    limit: int | None,
    cursor: str | None,
    **weights: Any,
) -> SearchPage:
    filters = dict(filters or {})
    params = SearchParams.build(
        query=query or "",
        mode=mode,
        filters=filters,
        limit=limit or settings.MCP_SEARCH_DEFAULT_LIMIT,
        cursor=cursor,
        **{name: value for name, value in weights.items() if value is not None},
    )
    return memory_search(principal, params)


LimitArg = Annotated[
    int | None,
    Field(
        description="How many results (default 50, at most 1000).",
        json_schema_extra={"minimum": 1, "maximum": MAX_RESULTS},
    ),
]
CursorArg = Annotated[str | None, Field(description="The next_cursor of a previous call, to get the next page.")]


@tool(
    "memory-search",
    title="Search memories",
    description=(
        "Find memories by meaning and by words together (hybrid search), with optional filters. Returns a JSON "
        "array of memories, best first: relevance, then importance, then newest; without a query, by importance "
        'then recency. If more results exist, a second content block holds {"next_cursor": ...}. '
        "Use specific words; use memory://index to browse instead."
    ),
    read_only=True,
)
def memory_search_tool(
    principal: Principal,
    *,
    query: Annotated[str | None, Field(description="What you are looking for, in words.")] = None,
    filters: Filters = None,
    limit: LimitArg = None,
    cursor: CursorArg = None,
    mode: Annotated[str, _enum([m.value for m in SearchMode], "hybrid (default), vector or keyword.")] = "hybrid",
    include_deleted: Annotated[bool, Field(description="Also return soft-deleted memories.")] = False,
    min_importance: Importance = None,
    valid_at: ValidAt = None,
    include_expired: IncludeExpired = False,
    vector_weight: Annotated[
        float | None, Field(description="Weight of meaning in hybrid ranking.", json_schema_extra={"minimum": 0})
    ] = None,
    keyword_weight: Annotated[
        float | None, Field(description="Weight of exact words in hybrid ranking.", json_schema_extra={"minimum": 0})
    ] = None,
) -> ToolOutput:
    filters = _validity(filters, valid_at, include_expired)
    if include_deleted:
        filters["include_deleted"] = True
    if min_importance is not None:
        filters["min_importance"] = min_importance
    page = _search(
        principal,
        query=query,
        filters=filters,
        mode=mode,
        limit=limit,
        cursor=cursor,
        vector_weight=vector_weight,
        keyword_weight=keyword_weight,
    )
    return _search_output(page)


@tool(
    "memory-vector-search",
    title="Search memories by meaning",
    description=(
        "Find memories similar in meaning to the query, even without shared words. Use when exact keywords fail. "
        "Returns a JSON array of memories, most similar first, with their similarity."
    ),
    read_only=True,
)
def memory_vector_search(
    principal: Principal,
    *,
    query: Annotated[str, Field(description="A description of what you are looking for.")],
    filters: Filters = None,
    limit: LimitArg = None,
    cursor: CursorArg = None,
) -> ToolOutput:
    page = _search(principal, query=query, filters=filters, mode=SearchMode.VECTOR, limit=limit, cursor=cursor)
    return _search_output(page)


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
        _enum(["related", "depends_on", "supersedes", "contradicts", "derived_from", "part_of"], "Kind of relation."),
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
        Field(description="Memory objects with the memory-write fields (scope_type, memory_type, current_content…)."),
    ],
    organization: Annotated[str | None, Field(description="Your organization's slug (optional).")] = None,
) -> list[dict[str, Any]]:
    results = memory_batch_create(principal=principal, entries=memories, organization=organization)
    hints = possible_duplicates([result.memory for result in results if result.memory is not None])
    return [
        {
            "index": result.index,
            "ok": True,
            "memory": memory_payload(result.memory, possible_duplicates=hints_payload(hints[result.memory.pk])),
        }
        if result.memory is not None
        else {"index": result.index, "ok": False, "error": result.error.message if result.error else "failed"}
        for result in results
    ]


@tool(
    "memory-get",
    title="Get memories by id",
    description=(
        "Read one memory (`id`) or several (`ids`) in full, with their links and how many versions they have. "
        "Unknown or invisible ids are reported in `missing`."
    ),
    read_only=True,
)
def memory_get(
    principal: Principal,
    *,
    id: Annotated[str | None, Field(description="One memory id.")] = None,
    ids: Annotated[list[str] | None, Field(description="Several memory ids.")] = None,
) -> Any:
    wanted = ([id] if id else []) + list(ids or [])
    if not wanted:
        raise ValidationError("pass `id` (one memory) or `ids` (a list of memory ids)")
    if id and not ids:
        return _detail_payload(selectors.memory_detail(principal, id))
    details = selectors.memory_details(principal, wanted)
    return {"memories": [_detail_payload(detail) for detail in details.found], "missing": details.missing}


def _detail_payload(detail: selectors.MemoryDetail) -> dict[str, Any]:
    return memory_payload(detail.memory, links=detail.links, version_count=detail.version_count)


@tool(
    "memory-history",
    title="Version history of a memory",
    description="Every version of a memory, newest first: what changed, who changed it, when and why.",
    read_only=True,
)
def memory_history(principal: Principal, id: MemoryId) -> dict[str, Any]:
    versions = selectors.memory_versions(principal, id)
    return {"id": id, "versions": [version_payload(version) for version in versions]}


@tool(
    "memory-list",
    title="List memories",
    description=(
        "List memories matching filters, without a search query. sort_by: importance (default), created_at, "
        "updated_at (newest first) or title. Returns {memories, next_cursor}; pass next_cursor back as cursor."
    ),
    read_only=True,
)
def memory_list(
    principal: Principal,
    *,
    filters: Filters = None,
    sort_by: Annotated[str, _enum(list(selectors.MEMORY_SORTS), "Order of the list.")] = "importance",
    limit: Annotated[
        int, Field(description="Page size (default 50).", json_schema_extra={"minimum": 1, "maximum": MAX_RESULTS})
    ] = 50,
    cursor: CursorArg = None,
    valid_at: ValidAt = None,
    include_expired: IncludeExpired = False,
) -> dict[str, Any]:
    check_limit(limit, MAX_RESULTS)
    page = selectors.memory_page(
        principal,
        filters=selectors.MemoryFilters.from_mapping(_validity(filters, valid_at, include_expired)),
        sort_by=sort_by,
        limit=limit,
        cursor=cursor,
    )
    return {"memories": [memory_payload(memory) for memory in page.items], "next_cursor": page.next_cursor}


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
    memory = services.memory_invalidate(principal=principal, memory_id=id, reason=reason, superseded_by=superseded_by)
    return memory_payload(memory)
