"""Reads for knowledge, limited to what the principal may see."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Q
from django.utils import timezone

from knowledge.mentions import mentions_of
from knowledge.models import Entity, EntityAlias, MemoryLink, RelationType, Triple
from knowledge.words import normalized_name
from memories import validation
from memories.models import Memory
from memories.selectors import memory_get, memory_get_many, memory_version_counts, memory_visible_queryset
from memory_platform.db.tenancy import same_organization
from memory_platform.exceptions import NotFound, ValidationError
from memory_platform.pagination import Keyset, Kind, Page, keyset_page
from organizations.principal import Principal


def links_for_memories(principal: Principal, memory_ids: list[Any]) -> dict[Any, list[dict[str, Any]]]:
    """Active links touching the given memories, both directions, where the other end is visible."""
    visible = memory_visible_queryset(principal).values("pk")
    links = (
        MemoryLink.objects.filter(organization=principal.organization, removed_at__isnull=True)
        .filter(Q(source_id__in=memory_ids, target_id__in=visible) | Q(target_id__in=memory_ids, source_id__in=visible))
        .order_by("created_at")
    )
    result: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    wanted = set(memory_ids)
    for link in links:
        if link.source_id in wanted:
            result[link.source_id].append(
                {"direction": "outgoing", "relation_type": link.relation_type, "memory_id": str(link.target_id)}
            )
        if link.target_id in wanted:
            result[link.target_id].append(
                {"direction": "incoming", "relation_type": link.relation_type, "memory_id": str(link.source_id)}
            )
    return result


@dataclass(frozen=True)
class MemoryDetail:
    """A memory with its visible links, how many versions it has and the names it mentions (memory-get)."""

    memory: Memory
    links: list[dict[str, Any]]
    version_count: int
    mentions: list[dict[str, Any]]


@dataclass(frozen=True)
class MemoryDetails:
    found: list[MemoryDetail]
    missing: list[Any]  # the ids asked for, as given, that are unknown or not visible


def _details(principal: Principal, memories: list[Memory]) -> list[MemoryDetail]:
    keys = [memory.pk for memory in memories]
    links = links_for_memories(principal, keys)
    versions = memory_version_counts(keys)
    mentions = mentions_of(principal.organization.pk, keys) if keys else {}
    return [
        MemoryDetail(m, links=links.get(m.pk, []), version_count=versions.get(m.pk, 0), mentions=mentions.get(m.pk, []))
        for m in memories
    ]


def memory_detail(principal: Principal, memory_id: Any) -> MemoryDetail:
    return _details(principal, [memory_get(principal, memory_id)])[0]


def memory_details(principal: Principal, memory_ids: list[Any]) -> MemoryDetails:
    """The visible memories among ``memory_ids`` in the order asked, and the ids that were not found."""
    memories = memory_get_many(principal, memory_ids)
    found = {memory.pk for memory in memories}
    # Compared as UUIDs: an id spelled in capitals or without dashes was found, not missing.
    missing = [value for value in memory_ids if validation.memory_id(value) not in found]
    return MemoryDetails(found=_details(principal, memories), missing=missing)


def memory_links(principal: Principal, memory_id: Any) -> list[MemoryLink]:
    """The active links of one visible memory, both directions, whose other end is visible too."""
    pk = memory_get(principal, memory_id).pk
    visible = memory_visible_queryset(principal).values("pk")
    return list(
        MemoryLink.objects.filter(organization=principal.organization, removed_at__isnull=True)
        .filter(Q(source_id=pk, target_id__in=visible) | Q(target_id=pk, source_id__in=visible))
        .order_by("created_at", "pk")
    )


def link_get(principal: Principal, link_id: Any) -> MemoryLink:
    """An active link of the organization whose two ends the principal can see."""
    try:
        pk = int(link_id)
    except (TypeError, ValueError):
        raise NotFound(f"link {link_id} not found") from None
    visible = memory_visible_queryset(principal).values("pk")
    link = MemoryLink.objects.filter(
        organization=principal.organization,
        removed_at__isnull=True,
        pk=pk,
        source_id__in=visible,
        target_id__in=visible,
    ).first()
    if link is None:
        raise NotFound(f"link {link_id} not found")
    return link


def entity_get(principal: Principal, entity_id: Any) -> Entity:
    try:
        pk = int(entity_id)
    except (TypeError, ValueError):
        raise NotFound(f"entity {entity_id} not found") from None
    entity = Entity.objects.filter(organization=principal.organization, pk=pk).prefetch_related("aliases").first()
    if entity is None:
        raise NotFound(f"entity {entity_id} not found")
    return entity


ENTITY_ORDER = Keyset.of(("id", Kind.WHOLE))


def entity_page(principal: Principal, *, name: str = "", after: int = 0, limit: int = 50) -> Page[Entity]:
    """The organization's entities by id, after the id ``after``; ``name`` keeps those with an alias
    containing it. The cursor is the bare id: the REST schema publishes it as an integer."""
    queryset = Entity.objects.filter(organization=principal.organization)
    if name.strip():
        normalized = normalized_name(name)
        queryset = queryset.filter(
            pk__in=EntityAlias.objects.filter(
                organization=principal.organization, normalized__contains=normalized
            ).values("entity_id")
        )
    return keyset_page(
        queryset.prefetch_related("aliases"), ENTITY_ORDER, limit=limit, after=[after] if after else None
    )


# --- memory graph ------------------------------------------------------------------------------

GRAPH_MAX_HOPS = 5
GRAPH_MAX_NODES = 200


@dataclass(frozen=True)
class Graph:
    nodes: list[Memory]
    edges: list[dict[str, Any]]
    truncated: bool
    depth: dict[Any, int]


_GRAPH_SQL = """
WITH RECURSIVE walk(id, depth) AS (
    SELECT m.id, 0
    FROM memories_memory m WHERE m.id = ANY(%(seeds)s)
  UNION
    SELECT next.id, walk.depth + 1
    FROM walk
    JOIN LATERAL (
        SELECT l.target_id AS id FROM knowledge_memorylink l
         WHERE %(outgoing)s AND l.source_id = walk.id AND l.removed_at IS NULL
           AND l.organization_id = %(org)s AND (%(any_relation)s OR l.relation_type = ANY(%(relations)s))
        UNION
        SELECT l.source_id FROM knowledge_memorylink l
         WHERE %(incoming)s AND l.target_id = walk.id AND l.removed_at IS NULL
           AND l.organization_id = %(org)s AND (%(any_relation)s OR l.relation_type = ANY(%(relations)s))
    ) AS next ON TRUE
    WHERE walk.depth < %(hops)s
)
SELECT id, min(depth) FROM walk GROUP BY id ORDER BY min(depth), id LIMIT %(cap)s
"""


def memory_graph(
    principal: Principal,
    *,
    seed_ids: list[Any],
    max_hops: Any = 2,
    direction: str = "both",
    relation_types: list[str] | None = None,
    max_nodes: int = GRAPH_MAX_NODES,
) -> Graph:
    """Memories reachable from the seeds through links, in one recursive query.

    The walk keeps each (memory, distance) pair once (UNION), so it ends on cycles and costs at
    most nodes * hops rows however many paths a dense graph has. Hidden memories are neither
    returned nor walked through; at most ``max_nodes`` nodes come back, and ``truncated`` says
    when the cap hit.
    """
    if not isinstance(seed_ids, list) or not seed_ids:
        raise ValidationError("seed_ids must be a non-empty list of memory ids", details={"field": "seed_ids"})
    if direction not in ("outgoing", "incoming", "both"):
        raise ValidationError("direction must be one of: outgoing, incoming, both", details={"field": "direction"})
    if isinstance(max_hops, bool) or not isinstance(max_hops, int) or not 1 <= max_hops <= GRAPH_MAX_HOPS:
        raise ValidationError(f"max_hops must be from 1 to {GRAPH_MAX_HOPS}", details={"field": "max_hops"})
    relations = list(relation_types or [])
    unknown = [r for r in relations if r not in RelationType.values]
    if unknown:
        raise ValidationError(
            f"unknown relation_types {unknown}; use: {', '.join(RelationType.values)}",
            details={"field": "relation_types"},
        )
    seeds = [m.pk for m in memory_get_many(principal, seed_ids)]
    if not seeds:
        raise NotFound("none of the seed memories was found")
    with connection.cursor() as cursor:
        cursor.execute(
            _GRAPH_SQL.replace("%(outgoing)s", "TRUE" if direction in ("outgoing", "both") else "FALSE").replace(
                "%(incoming)s", "TRUE" if direction in ("incoming", "both") else "FALSE"
            ),
            {
                "seeds": seeds,
                "org": principal.organization.pk,
                "any_relation": not relations,
                "relations": relations,
                "hops": max_hops,
                "cap": max_nodes * 4 + 1,
            },
        )
        reached = cursor.fetchall()
    depth = {row[0]: row[1] for row in reached}
    visible = {
        m.pk: m
        for m in memory_visible_queryset(principal)
        .select_related("organization", "repository")
        .filter(pk__in=list(depth))
    }
    # Walking through a hidden memory would reveal what it links to: keep only nodes reachable
    # through visible ones (re-walk the found set in memory, breadth first).
    ordered = [pk for pk, _ in sorted(depth.items(), key=lambda item: (item[1], str(item[0]))) if pk in visible]
    links = list(
        MemoryLink.objects.filter(
            organization=principal.organization, removed_at__isnull=True, source_id__in=ordered, target_id__in=ordered
        ).filter(Q(relation_type__in=relations) if relations else Q())
    )
    adjacency: dict[Any, set[Any]] = defaultdict(set)
    for link in links:
        if direction in ("outgoing", "both"):
            adjacency[link.source_id].add(link.target_id)
        if direction in ("incoming", "both"):
            adjacency[link.target_id].add(link.source_id)
    reachable: dict[Any, int] = {pk: 0 for pk in seeds if pk in visible}
    frontier = list(reachable)
    while frontier:
        following = []
        for pk in frontier:
            for neighbour in adjacency[pk]:
                if neighbour not in reachable and reachable[pk] < max_hops:
                    reachable[neighbour] = reachable[pk] + 1
                    following.append(neighbour)
        frontier = following
    keep = sorted(reachable, key=lambda pk: (reachable[pk], str(pk)))
    truncated = len(keep) > max_nodes or len(reached) > max_nodes * 4
    keep = keep[:max_nodes]
    kept = set(keep)
    edges = [
        {"source": str(link.source_id), "target": str(link.target_id), "relation_type": link.relation_type}
        for link in links
        if link.source_id in kept and link.target_id in kept
    ]
    return Graph(nodes=[visible[pk] for pk in keep], edges=edges, truncated=truncated, depth=reachable)


# --- temporal triples --------------------------------------------------------------------------


def entity_find(principal: Principal, name: Any) -> Entity | None:
    """The organization's entity known by ``name`` or an alias of it (case-insensitive)."""
    if not isinstance(name, str) or not name.strip():
        raise ValidationError("subject must be a non-empty name", details={"field": "subject"})
    normalized = normalized_name(name)
    alias = (
        EntityAlias.objects.select_related("entity")
        .filter(same_organization("entity"), organization=principal.organization, normalized=normalized)
        .first()
    )
    return alias.entity if alias else None


def triple_query(
    principal: Principal,
    *,
    subject: Any,
    predicate: Any = None,
    object: Any = None,
    as_of: Any = None,
    include_history: bool = False,
    include_records: bool = False,
) -> tuple[Entity | None, list[Triple]]:
    """Facts about ``subject``: those true now (default), true at ``as_of``, their history, or
    every stored record.

    Valid time is half-open: a fact holds from ``valid_from`` (inclusive) to ``valid_to``
    (exclusive). ``include_history`` is the timeline: one row per value and the period it held,
    as the platform believes it now (what was replaced or corrected shows once, with its end).
    ``include_records`` is the bi-temporal audit: every row ever recorded, replaced ones too.
    """
    # Checked first: a malformed time must be an error even when the subject is unknown.
    moment = validation.aware_datetime(as_of, "as_of") or timezone.now()
    entity = entity_find(principal, subject)
    if entity is None:
        return None, []
    queryset = Triple.objects.filter(
        same_organization("subject", "object"), organization=principal.organization, subject=entity
    ).select_related("subject", "object", "repository")
    if predicate:
        queryset = queryset.filter(predicate="_".join(str(predicate).strip().lower().split()))
    if object:
        target = entity_find(principal, object)
        if target is None:
            return entity, []
        queryset = queryset.filter(object=target)
    if include_records:
        return entity, list(queryset.order_by("predicate", "valid_from", "recorded_at", "pk"))
    if include_history:
        return entity, list(queryset.filter(expired_at__isnull=True).order_by("predicate", "valid_from", "pk"))
    queryset = queryset.filter(expired_at__isnull=True, valid_from__lte=moment).filter(
        Q(valid_to__isnull=True) | Q(valid_to__gt=moment)
    )
    return entity, list(queryset.order_by("predicate", "valid_from", "pk"))


RELATED_MAX_DEPTH = 4
RELATED_MAX_ENTITIES = 200

_RELATED_SQL = """
WITH RECURSIVE walk(id, depth) AS (
    SELECT %(start)s::bigint, 0
  UNION
    SELECT next.id, walk.depth + 1
    FROM walk
    JOIN LATERAL (
        SELECT t.object_id AS id FROM knowledge_triple t
         WHERE %(outgoing)s AND t.subject_id = walk.id AND t.organization_id = %(org)s
           AND t.expired_at IS NULL AND t.valid_from <= %(now)s AND (t.valid_to IS NULL OR t.valid_to > %(now)s)
        UNION
        SELECT t.subject_id FROM knowledge_triple t
         WHERE %(incoming)s AND t.object_id = walk.id AND t.organization_id = %(org)s
           AND t.expired_at IS NULL AND t.valid_from <= %(now)s AND (t.valid_to IS NULL OR t.valid_to > %(now)s)
    ) AS next ON TRUE
    WHERE walk.depth < %(depth)s
)
SELECT id, min(depth) FROM walk WHERE id <> %(start)s GROUP BY id ORDER BY min(depth), id LIMIT %(cap)s
"""


def entity_related(
    principal: Principal, *, name: Any, depth: Any = 1, direction: str = "both", limit: int = RELATED_MAX_ENTITIES
) -> tuple[Entity | None, list[tuple[Entity, int]], list[Triple], bool]:
    """Entities connected to ``name`` through current facts, up to ``depth`` steps away."""
    if direction not in ("outgoing", "incoming", "both"):
        raise ValidationError("direction must be one of: outgoing, incoming, both", details={"field": "direction"})
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= RELATED_MAX_DEPTH:
        raise ValidationError(f"depth must be from 1 to {RELATED_MAX_DEPTH}", details={"field": "depth"})
    entity = entity_find(principal, name)
    if entity is None:
        return None, [], [], False
    sql = _RELATED_SQL.replace("%(outgoing)s", "TRUE" if direction in ("outgoing", "both") else "FALSE").replace(
        "%(incoming)s", "TRUE" if direction in ("incoming", "both") else "FALSE"
    )
    # The application's clock, as for every other valid-time check: the database's now() is the
    # start of the transaction, which can be older than facts recorded within it.
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            sql, {"start": entity.pk, "org": principal.organization.pk, "depth": depth, "cap": limit + 1, "now": now}
        )
        rows = cursor.fetchall()
    truncated = len(rows) > limit
    rows = rows[:limit]
    entities = Entity.objects.in_bulk([row[0] for row in rows])
    related = [(entities[pk], hops) for pk, hops in rows if pk in entities]
    ids = [entity.pk, *entities]
    facts = list(
        Triple.objects.filter(
            same_organization("subject", "object"),
            organization=principal.organization,
            expired_at__isnull=True,
            valid_from__lte=now,
            subject_id__in=ids,
            object_id__in=ids,
        )
        .filter(Q(valid_to__isnull=True) | Q(valid_to__gt=now))
        .select_related("subject", "object")
    )
    return entity, related, facts, truncated
