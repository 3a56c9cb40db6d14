"""Graph and temporal-knowledge tools: memory-graph, kg-assert, kg-query, kg-invalidate, kg-related."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from knowledge import selectors, services
from knowledge.mentions import entity_mentions
from knowledge.models import RelationType
from mcp_api.payloads import memory_index_payload, triple_payload
from mcp_api.server import tool
from organizations.principal import Principal

Direction = Annotated[
    str,
    Field(
        description="outgoing, incoming or both (default).",
        json_schema_extra={"enum": ["outgoing", "incoming", "both"]},
    ),
]


@tool(
    "memory-graph",
    title="Explore linked memories",
    description=(
        "Follow links from seed memories up to `max_hops` steps, by direction and relation types. Returns "
        "{nodes, edges, truncated}: nodes are lightweight memory entries with their distance (hops); "
        "`truncated` is true when the node cap (200) was hit."
    ),
    read_only=True,
)
def memory_graph(
    principal: Principal,
    *,
    seed_ids: Annotated[list[str], Field(description="Memory ids to start from.")],
    max_hops: Annotated[
        int, Field(description="How many links away to go (1-5).", json_schema_extra={"minimum": 1, "maximum": 5})
    ] = 2,
    direction: Direction = "both",
    relation_types: Annotated[
        list[str] | None,
        Field(description="Only follow these relations.", json_schema_extra={"items": {"enum": RelationType.values}}),
    ] = None,
) -> dict[str, Any]:
    graph = selectors.memory_graph(
        principal, seed_ids=seed_ids, max_hops=max_hops, direction=direction, relation_types=relation_types
    )
    return {
        "nodes": [{**memory_index_payload(node), "hops": graph.depth[node.pk]} for node in graph.nodes],
        "edges": graph.edges,
        "truncated": graph.truncated,
    }


@tool(
    "kg-assert",
    title="Assert a fact",
    description=(
        'Record a fact (subject, predicate, object), e.g. ("Alice", "works_on", "Payments"), true from '
        "`valid_from` (default now). Subjects and objects are entities, created on first use and matched by name "
        "or alias, ignoring case. The fact currently open for the same subject and predicate ends where this one "
        "starts (unless the predicate is multi-valued), so history is kept; a fact dated before one already recorded "
        "ends where that one begins. Asserting the same fact again changes nothing. Returns the fact, with "
        "`ended`: the facts this one replaced, each with the period it held."
    ),
)
def kg_assert(
    principal: Principal,
    *,
    subject: Annotated[str, Field(description="Who or what the fact is about.")],
    predicate: Annotated[str, Field(description="The relation, e.g. works_on, owns, located_in.")],
    object: Annotated[str, Field(description="The value or related entity.")],
    confidence: Annotated[
        float, Field(description="0 to 1 (default 1).", json_schema_extra={"minimum": 0, "maximum": 1})
    ] = 1.0,
    provenance: Annotated[str | None, Field(description="Where this comes from (ticket, document, person).")] = None,
    valid_from: Annotated[str | None, Field(description="ISO 8601 time it became true (default now).")] = None,
    memory_id: Annotated[str | None, Field(description="Id of the memory this fact was learned from.")] = None,
) -> dict[str, Any]:
    triple, _ = services.triple_assert(
        principal=principal,
        subject=subject,
        predicate=predicate,
        object=object,
        confidence=confidence,
        provenance=provenance,
        valid_from=valid_from,
        memory_id=memory_id,
    )
    return {**triple_payload(triple), "ended": [triple_payload(fact) for fact in triple.ended]}


@tool(
    "kg-query",
    title="Query facts",
    description=(
        "Facts about a subject: those true now, those true at `as_of` (ISO 8601), or with `include_history` the "
        "timeline (each value once, with the period it held: valid_from to valid_to, null while it still holds). "
        "`include_records` returns every stored record, replaced and corrected ones too (an audit). "
        "Returns {subject, triples: [{subject, predicate, object, valid_from, valid_to, recorded_at, confidence, "
        "provenance, ...}]}."
    ),
    read_only=True,
)
def kg_query(
    principal: Principal,
    *,
    subject: Annotated[str, Field(description="Entity name or alias.")],
    predicate: Annotated[str | None, Field(description="Only this relation.")] = None,
    object: Annotated[str | None, Field(description="Only facts with this object.")] = None,
    as_of: Annotated[str | None, Field(description="ISO 8601 time: facts true at that moment.")] = None,
    include_history: Annotated[
        bool, Field(description="The timeline: each value once with the period it held, oldest first.")
    ] = False,
    include_records: Annotated[
        bool, Field(description="Every stored record, replaced and corrected ones too (bi-temporal audit).")
    ] = False,
) -> dict[str, Any]:
    entity, triples = selectors.triple_query(
        principal, subject=subject, predicate=predicate, object=object, as_of=as_of,
        include_history=include_history, include_records=include_records,
    )  # fmt: skip
    return {"subject": entity.name if entity else subject, "triples": [triple_payload(t) for t in triples]}


@tool(
    "kg-invalidate",
    title="Invalidate a fact",
    description=(
        "End a fact now because it stopped being true (or never was), with the reason and optionally the id of "
        "the fact that replaces it. The fact stays in the history."
    ),
)
def kg_invalidate(
    principal: Principal,
    *,
    id: Annotated[int, Field(description="The fact's id (from kg-query).")],
    reason: Annotated[str, Field(description="Why it no longer holds.")],
    successor_id: Annotated[int | None, Field(description="Id of the fact that replaces it.")] = None,
) -> str:
    services.triple_invalidate(principal=principal, triple_id=id, reason=reason, successor_id=successor_id)
    return f"Fact {id} has been invalidated."


@tool(
    "kg-related",
    title="Related entities",
    description=(
        "Entities connected to one entity through current facts, up to `depth` steps (1-4), with the facts "
        "between them, and the memories that mention it by any of its names with the names they mention most "
        "beside it. Returns {entity, related: [{name, type, hops}], facts, truncated, memories (as memory://index "
        "lists them: no content, with author and review), memories_total, mentioned_with: [{name, memories}]}."
    ),
    read_only=True,
)
def kg_related(
    principal: Principal,
    *,
    entity: Annotated[str, Field(description="Entity name or alias.")],
    depth: Annotated[
        int, Field(description="Steps away (default 1).", json_schema_extra={"minimum": 1, "maximum": 4})
    ] = 1,
    direction: Direction = "both",
) -> dict[str, Any]:
    found, related, facts, truncated = selectors.entity_related(
        principal, name=entity, depth=depth, direction=direction
    )
    mentioned = entity_mentions(principal, found)
    return {
        "entity": found.name if found else entity,
        "related": [{"name": e.name, "type": e.entity_type or None, "hops": hops} for e, hops in related],
        "facts": [triple_payload(fact) for fact in facts],
        "truncated": truncated,
        "memories": [memory_index_payload(m) for m in mentioned.memories],
        "memories_total": mentioned.total,
        "mentioned_with": [{"name": name, "memories": count} for name, count in mentioned.mentioned_with],
    }
