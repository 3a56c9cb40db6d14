"""The memory-entity graph: the names each memory mentions (knowledge.names), kept in step with its
text, and the reads over it.

Written in the transaction that writes the text (memories.written calls ``text_written``): a new
memory's names are added, a changed one's replaced. A name is kept by its key, so a memory mentions
an entity when it mentions any of the entity's names or aliases; an alias given after the memory
was written is looked for in the organization's memories by the worker (``alias_given``), which is
what a name the finder could not tell from other words ("the payments service") needs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from django.contrib.postgres.search import SearchQuery
from django.db import connection
from django.db.models import Count, Exists, Min, OuterRef, Q, QuerySet

from knowledge.models import Entity, Mention
from knowledge.names import names_in
from knowledge.words import alias_words
from memories.models import Memory
from memories.search.words import name_key
from memories.selectors import memory_get, memory_visible_queryset
from memory_platform.bulk import copy_rows
from organizations.principal import Principal

# How many memories mentioning an entity a read shows (the most important first).
MEMORIES_SHOWN = 20
_CHUNK = 1000


def text_of(memory: Memory) -> str:
    """What a memory says: its title, as a sentence of its own, then its content."""
    return f"{memory.title}.\n{memory.current_content}"


class _Row(NamedTuple):
    """A mention as its row: copied as it is (memory_platform.bulk.copy_rows), no instance built."""

    organization_id: int
    memory_id: Any
    key: str
    written: str
    kind: str


def _rows(organization_id: int, memories: Iterable[Memory], aliases: dict[str, str]) -> list[_Row]:
    return [
        _Row(organization_id, memory.pk, m.key, m.written, m.kind)
        for memory in memories
        for m in names_in(text_of(memory), aliases)
    ]


def _instances(rows: Iterable[_Row]) -> list[Mention]:
    return [Mention(**row._asdict()) for row in rows]


def text_written(organization_id: int, memories: Sequence[Memory], created: bool) -> None:
    """memories.written's listener: the names of memories whose text was just written; a memory
    written alone is told the tags it may want (``Memory.suggested_tags``)."""
    rows = _rows(organization_id, memories, alias_words.keys(organization_id))
    if created:
        copy_rows(Mention, _Row._fields, rows)
    else:
        Mention.objects.filter(memory_id__in=[memory.pk for memory in memories]).delete()
        Mention.objects.bulk_create(_instances(rows), batch_size=_CHUNK)
    if len(memories) == 1 and rows:
        memories[0].suggested_tags = suggested_tags(memories[0])


# Tags worn by the organization's memories that mention a name this one mentions (at most
# _NEIGHBOURS of them a name, so a name half the organization mentions costs no more than a rare
# one), shared or repository memories only (a person's own are theirs), not deleted, the most worn
# first.
_SUGGESTED_SQL = """
SELECT tag FROM (
  SELECT DISTINCT o.memory_id FROM knowledge_mention m
  CROSS JOIN LATERAL (
    SELECT o.memory_id FROM knowledge_mention o
    WHERE o.organization_id = m.organization_id AND o.key = m.key AND o.memory_id <> m.memory_id LIMIT %s
  ) o
  WHERE m.organization_id = %s AND m.memory_id = %s
) near
JOIN memories_memory mm ON mm.organization_id = %s AND mm.id = near.memory_id
CROSS JOIN LATERAL unnest(mm.tags) tag
WHERE mm.deleted_at IS NULL AND mm.scope_type <> 'user' AND NOT tag = ANY(%s::varchar[])
GROUP BY tag ORDER BY count(*) DESC, tag LIMIT %s
"""
_NEIGHBOURS = 50
SUGGESTED_TAGS_MAX = 5


def suggested_tags(memory: Memory) -> tuple[str, ...]:
    """Tags that memories mentioning the same names wear and ``memory`` does not."""
    with connection.cursor() as cursor:
        organization = memory.organization_id
        cursor.execute(
            _SUGGESTED_SQL,
            [_NEIGHBOURS, organization, memory.pk, organization, list(memory.tags or []), SUGGESTED_TAGS_MAX],
        )
        return tuple(row[0] for row in cursor.fetchall())


def alias_given(organization_id: int, alias: str) -> int:
    """Link the organization's memories that say ``alias`` (given after they were written); how many
    mentions were added. Full text narrows them, the finder decides (as it did at write time)."""
    key = name_key(alias)
    if not key:
        return 0
    said = Memory.objects.filter(organization_id=organization_id).filter(
        search_vector=SearchQuery(alias, search_type="phrase", config="english")
    )
    known = Mention.objects.filter(organization_id=organization_id, key=key).values("memory_id")
    candidates = said.exclude(pk__in=known).only("id", "title", "current_content")
    return sum(_add_alias(organization_id, key, batch) for batch in _batches(candidates))


def _add_alias(organization_id: int, key: str, memories: list[Memory]) -> int:
    rows = [row for row in _rows(organization_id, memories, {key: key}) if row.key == key]
    Mention.objects.bulk_create(_instances(rows), ignore_conflicts=True)
    return len(rows)


def rebuild(organization_id: int) -> int:
    """Every memory's names found again (after an upgrade, or to apply a better finder); how many."""
    aliases = alias_words.keys(organization_id)
    Mention.objects.filter(organization_id=organization_id).delete()
    memories = Memory.objects.filter(organization_id=organization_id).only("id", "title", "current_content")
    return sum(_copy(organization_id, batch, aliases) for batch in _batches(memories.order_by("pk")))


def _batches(memories: QuerySet[Memory]) -> Iterator[list[Memory]]:
    """The memories read a chunk at a time, in lists of up to _CHUNK."""
    batch: list[Memory] = []
    for memory in memories.iterator(chunk_size=_CHUNK):
        batch.append(memory)
        if len(batch) == _CHUNK:
            yield batch
            batch = []
    if batch:
        yield batch


def _copy(organization_id: int, memories: list[Memory], aliases: dict[str, str]) -> int:
    rows = _rows(organization_id, memories, aliases)
    copy_rows(Mention, _Row._fields, rows)
    return len(rows)


def mentions_of(organization_id: int, memory_ids: Sequence[Any]) -> dict[Any, list[dict[str, Any]]]:
    """Per memory: the names it mentions, in the order it mentions them, each with the entity it
    names when one of the organization's entities is known by it."""
    entities = alias_words.keys(organization_id)
    found: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    rows = Mention.objects.filter(memory_id__in=memory_ids).order_by("memory_id", "pk")
    for memory_id, key, written, kind in rows.values_list("memory_id", "key", "written", "kind"):
        found[memory_id].append({"name": written, "kind": kind, "entity": entities.get(key)})
    return found


def keys_for_name(organization_id: int, name: str) -> tuple[str, ...]:
    """The keys memories mention ``name`` by: every name and alias of the entity known by it, or the
    name's own key (a name no entity is known by)."""
    key = name_key(name)
    names = alias_words.keys(organization_id)
    entity = names.get(key)
    if entity is None:
        return (key,) if key else ()
    return tuple(sorted(other for other, named in names.items() if named == entity))


def mention_condition(keys: tuple[str, ...]) -> Q:
    """Memories that mention one of ``keys`` (memories.selectors.MemoryFilters.mentions)."""
    said = Mention.objects.filter(memory_id=OuterRef("pk"), organization_id=OuterRef("organization_id"), key__in=keys)
    return Q(Exists(said))


def entity_keys(entity: Entity) -> list[str]:
    """The keys of every name the entity is known by."""
    return list(dict.fromkeys(k for k in (name_key(a) for a in entity.aliases.values_list("alias", flat=True)) if k))


def memories_mentioning(principal: Principal, entity: Entity, limit: int = MEMORIES_SHOWN) -> tuple[list[Memory], int]:
    """The memories the principal may see that mention ``entity`` by any of its names, the most
    important first (at most ``limit``), and how many there are."""
    return mentioning_among(memory_visible_queryset(principal), entity, limit)


def mentioning_among(
    visible: QuerySet[Memory], entity: Entity, limit: int = MEMORIES_SHOWN
) -> tuple[list[Memory], int]:
    """The memories of ``visible`` (what someone may read: an agent's, or a person's in the admin)
    that mention ``entity``, the most important first (at most ``limit``), and how many there are."""
    mentioning = Mention.objects.filter(organization_id=entity.organization_id, key__in=entity_keys(entity))
    memories = visible.filter(organization_id=entity.organization_id, pk__in=mentioning.values("memory_id"))
    total = memories.count()
    shown = memories.select_related("organization", "repository").order_by("-importance", "-updated_at", "pk")
    return list(shown[:limit]), total


def mentioned_with(principal: Principal, entity: Entity, limit: int = MEMORIES_SHOWN) -> list[tuple[str, int]]:
    """The names most often mentioned beside ``entity`` in the memories the principal may see, with
    how many memories mention both (the graph one step out, through memories)."""
    keys = entity_keys(entity)
    mentioning = Mention.objects.filter(organization_id=entity.organization_id, key__in=keys).values("memory_id")
    visible = memory_visible_queryset(principal).filter(pk__in=mentioning).values("pk")
    beside = (
        Mention.objects.filter(organization_id=entity.organization_id, memory_id__in=visible)
        .exclude(key__in=keys)
        .values("key")
        .annotate(memories=Count("memory_id"), written=Min("written"))
        .order_by("-memories", "key")[:limit]
    )
    names = alias_words.keys(entity.organization_id)
    return [(names.get(row["key"], row["written"]), row["memories"]) for row in beside]


@dataclass(frozen=True)
class EntityMentions:
    """The memories that mention an entity (the first ``MEMORIES_SHOWN``, and how many in all) and
    the names they mention most beside it."""

    memories: list[Memory]
    total: int
    mentioned_with: list[tuple[str, int]]


def entity_mentions(principal: Principal, entity: Entity | None) -> EntityMentions:
    if entity is None:
        return EntityMentions([], 0, [])
    memories, total = memories_mentioning(principal, entity)
    return EntityMentions(memories, total, mentioned_with(principal, entity) if total else [])


def memory_mentions(principal: Principal, memory_id: Any) -> list[dict[str, Any]]:
    """The names a memory the principal may see mentions (NotFound otherwise)."""
    memory = memory_get(principal, memory_id)
    return mentions_of(memory.organization_id, [memory.pk]).get(memory.pk, [])
