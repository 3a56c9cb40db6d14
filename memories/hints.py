"""What a write's answer says of the memories already there: those it may repeat, and those it may
contradict. The same rules as the consolidation worker and ``memory-consolidate`` (memories.similarity),
so what a write is told and what the listing shows agree.

A contradiction found at write time also reaches the curators: the lifecycle app registers a
reporter (``conflict_reporter_set``) that opens a contradiction proposal, with a curated memory, when
one is involved, as its reference side. memories does not import lifecycle: it only calls back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from uuid import UUID

from django.conf import settings
from django.db import connection

from memories.fields import vector_text
from memories.models import Memory, Status
from memories.similarity import Match, MatchKind, classify
from memory_platform.db.transactions import savepoint_if_in_transaction

logger = logging.getLogger(__name__)

# How many of each a write is told of, and how many neighbours it is compared with.
WRITE_HINTS = 3
NEIGHBOURS = 6
CURATED = (Status.VERIFIED, Status.LOCKED)


@dataclass(frozen=True)
class Hint:
    """A memory of the written one's scope that it may repeat or contradict."""

    id: UUID
    title: str
    similarity: float
    status: str = ""
    differences: dict[str, Any] = field(default_factory=dict)
    exact: bool = False  # the same text once case, white space and punctuation are set aside
    memory_type: str = ""

    @property
    def curated(self) -> bool:
        return self.status in CURATED


@dataclass(frozen=True)
class WriteHints:
    possible_duplicates: list[Hint] = field(default_factory=list)
    conflicts: list[Hint] = field(default_factory=list)


def hint_kind(match: Match | None) -> str | None:
    """ "duplicate", "conflict" or None: how a write hint (and the consolidate listing) reads a match.
    Alike with nothing that tells them apart is a possible duplicate; alike but for a value is a
    conflict when the rules say contradiction, and two statements about different things otherwise."""
    if match is None:
        return None
    if match.kind == MatchKind.CONTRADICTION:
        return "conflict"
    if match.kind == MatchKind.DUPLICATE or not match.differences:
        return "duplicate"
    return None


# The new memories' nearest alive neighbours of the same scope (which their writer can see: it just
# wrote there): for the memories of one scope, one SELECT with a LATERAL subquery a memory, which
# PostgreSQL runs as a walk of the organization's own HNSW graph from that memory's vector
# (memories.search.tenant_indexes; an organization without one has its few rows sorted), or, for a
# scope that is a small part of its organization (a repository's, a person's), as a sort of that
# scope's rows. The organization and the scope are values of the statement, not of each memory, so
# that the planner sees which graph is meant and how many rows the scope holds. The iterative scan
# (so that enough rows of the scope are found) and pgvector's default ef_search (40: a handful of
# neighbours need no more) are set for these statements alone, sent with them in one round trip.
_SETTINGS_SQL = (
    "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', '40', true)"
)
_NEIGHBOURS_SQL = """
SELECT q.i, n.id, n.title, n.current_content, n.memory_type, n.status, n.similarity
FROM unnest(%(ids{g})s::uuid[], %(vectors{g})s::vector[]) WITH ORDINALITY AS q(id, v, i)
CROSS JOIN LATERAL (
  SELECT m.id, m.title, m.current_content, m.memory_type, m.status, 1 - (m.embedding <=> q.v) AS similarity
  FROM memories_memory AS m
  WHERE m.organization_id = %(organization)s AND m.scope_type = %(scope_type{g})s
    AND {repository} AND {owner}
    AND m.deleted_at IS NULL AND m.superseded_by_id IS NULL AND m.embedding IS NOT NULL AND m.id <> q.id
  ORDER BY m.embedding <=> q.v
  LIMIT %(limit)s
) AS n
ORDER BY q.i, n.similarity DESC
"""


def _neighbours(organization_id: int, written: list[Memory]) -> list[list[tuple[Any, ...]]]:
    """Each memory's nearest neighbours of its scope, as (id, title, content, type, status, similarity)."""
    scopes: dict[tuple[str, Any, Any], list[int]] = {}
    for position, memory in enumerate(written):
        scopes.setdefault((memory.scope_type, memory.repository_id, memory.owner_id), []).append(position)
    statements = [_SETTINGS_SQL]
    params: dict[str, Any] = {"organization": organization_id, "limit": NEIGHBOURS}
    for g, ((scope_type, repository, owner), positions) in enumerate(scopes.items()):
        statements.append(
            _NEIGHBOURS_SQL.format(
                g=g,
                repository="m.repository_id IS NULL" if repository is None else f"m.repository_id = %(repository{g})s",
                owner="m.owner_id IS NULL" if owner is None else f"m.owner_id = %(owner{g})s",
            )
        )
        params |= {
            f"ids{g}": [written[i].pk for i in positions],
            f"vectors{g}": [vector_text(list(written[i].embedding)) for i in positions],
            f"scope_type{g}": scope_type,
            f"repository{g}": repository,
            f"owner{g}": owner,
        }
    found: list[list[tuple[Any, ...]]] = [[] for _ in written]
    # The statements sent as one run in one (implicit) transaction, which the settings last for;
    # inside a caller's transaction, a savepoint keeps them to it as before.
    with savepoint_if_in_transaction(), connection.cursor() as cursor:
        cursor.execute(";".join(statements), params)
        for positions in scopes.values():
            cursor.nextset()
            for i, *row in cursor.fetchall():
                found[positions[i - 1]].append(tuple(row))
    return found


def write_hints(memories: Sequence[Memory]) -> dict[UUID, WriteHints]:
    """For each written memory: up to three alive memories of its scope it may repeat, and up to three
    it may contradict (memories.similarity's rules), nearest first. None for a memory without an
    embedding (the provider was down): the worker compares it once it has one."""
    hints: dict[UUID, WriteHints] = {memory.pk: WriteHints() for memory in memories}
    by_organization: dict[int, list[Memory]] = {}
    for memory in memories:
        if memory.embedding is not None:
            by_organization.setdefault(memory.organization_id, []).append(memory)
    floor = min(settings.CONSOLIDATION_RELATED, settings.CONSOLIDATION_CONFLICT)
    for organization_id, written in by_organization.items():
        for memory, rows in zip(written, _neighbours(organization_id, written), strict=True):
            hints[memory.pk] = _classified(memory, [row for row in rows if row[5] >= floor])
    return hints


class _Row(NamedTuple):
    pk: Any
    current_content: str
    memory_type: str


def _classified(memory: Memory, rows: list[tuple[Any, ...]]) -> WriteHints:
    duplicates: list[Hint] = []
    conflicts: list[Hint] = []
    for other_id, title, content, memory_type, status, similarity in rows:
        # A row's columns are all the rules read: no model instance is built for it.
        other = _Row(other_id, content, memory_type)
        match = classify(memory, other, float(similarity))
        kind = hint_kind(match)
        if kind is None or match is None:
            continue
        hint = Hint(other_id, title, round(float(similarity), 4), status, match.differences, match.exact, memory_type)
        (conflicts if kind == "conflict" else duplicates).append(hint)
    return WriteHints(possible_duplicates=duplicates[:WRITE_HINTS], conflicts=conflicts[:WRITE_HINTS])


# --- reporting contradictions to curators ------------------------------------------------------

ConflictReporter = Callable[[Memory, list[Hint]], object]
_reporters: list[ConflictReporter] = []


def conflict_reporter_set(reporter: ConflictReporter) -> None:
    """Who turns a write's conflicts into work for curators (lifecycle sets it when it loads)."""
    _reporters[:] = [reporter]


def report_conflicts(memory: Memory, conflicts: list[Hint]) -> None:
    """Hand a write's conflicts to the curators' side. A failure there never fails the write: the
    consolidation worker finds the same pair on its next run."""
    if not conflicts or not _reporters:
        return
    try:
        with savepoint_if_in_transaction():
            _reporters[0](memory, conflicts)
    except Exception:
        logger.exception("the contradictions of memory %s were left to the consolidation worker", memory.pk)
