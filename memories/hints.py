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

import numpy as np
from django.conf import settings
from django.db import connection

from memories.models import Memory, Status
from memories.search import tenant_indexes
from memories.search.caches import graphs
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
FROM unnest(%(ids{g})s::uuid[]) WITH ORDINALITY AS q(id, i)
JOIN memories_memory AS w ON w.organization_id = %(organization)s AND w.id = q.id
CROSS JOIN LATERAL (
  SELECT m.id, m.title, m.current_content, m.memory_type, m.status, 1 - (m.embedding <=> w.embedding) AS similarity
  FROM memories_memory AS m
  WHERE m.organization_id = %(organization)s AND m.scope_type = %(scope_type{g})s
    AND {repository} AND {owner}
    AND m.deleted_at IS NULL AND m.superseded_by_id IS NULL AND m.embedding IS NOT NULL AND m.id <> q.id
  ORDER BY {nearest}
  LIMIT %(limit)s
) AS n
WHERE n.similarity >= %(floor)s
ORDER BY q.i, n.similarity DESC
"""


# A batch of many memories in a scope of few: every new memory is compared with every row of the
# scope, in one matrix product here, with the scope's vectors read once (their binary form), instead
# of PostgreSQL sorting the scope's rows once per new memory (its cosine distance, row by row, was
# most of a batch's database time: bench/ingest_hints.py).
# A scope of more rows than MATRIX_ROWS_PER_MEMORY per new memory (at least MATRIX_ROWS, at most
# MATRIX_ROWS_MAX) has its organization's HNSW graph walked instead (SQL below), once per memory.
MATRIX_AT_LEAST = 16
MATRIX_ROWS = 4000
MATRIX_ROWS_PER_MEMORY = 16
MATRIX_ROWS_MAX = 16_000
_SCOPE_ROWS = """
FROM memories_memory AS m
WHERE m.organization_id = %s AND m.scope_type = %s AND {repository} AND {owner}
  AND m.deleted_at IS NULL AND m.superseded_by_id IS NULL AND m.embedding IS NOT NULL
"""
_ROWS_SQL = "SELECT id, title, current_content, memory_type, status FROM memories_memory WHERE id = ANY(%s::uuid[])"


def _scope_condition(column: str, value: Any) -> tuple[str, list[Any]]:
    return (f"m.{column} IS NULL", []) if value is None else (f"m.{column} = %s", [value])


def _by_matrix(
    organization_id: int, scope: tuple[str, Any, Any], memories: list[Memory], floor: float
) -> list[list[tuple[Any, ...]]] | None:
    """The neighbours of ``memories`` (all of one scope) as _neighbours gives them, from one read of
    the scope's vectors; None when the scope holds too many of them (see MATRIX_ROWS)."""
    most = min(MATRIX_ROWS_MAX, max(MATRIX_ROWS, MATRIX_ROWS_PER_MEMORY * len(memories)))
    scope_type, repository, owner = scope
    repository_sql, repository_params = _scope_condition("repository_id", repository)
    owner_sql, owner_params = _scope_condition("owner_id", owner)
    rows_sql = _SCOPE_ROWS.format(repository=repository_sql, owner=owner_sql)
    params = [organization_id, scope_type, *repository_params, *owner_params]
    with connection.cursor() as cursor:
        # Counted first (ids only): a large scope's vectors are not read for nothing.
        cursor.execute(f"SELECT count(*) FROM (SELECT 1 {rows_sql} LIMIT %s) s", [*params, most + 1])  # noqa: S608 - our SQL, values as parameters
        if cursor.fetchone()[0] > most:
            return None
        cursor.execute(f"SELECT m.id, vector_send(m.embedding) {rows_sql}", params)
        rows = cursor.fetchall()
    found: list[list[tuple[Any, ...]]] = [[] for _ in memories]
    if not rows:
        return found
    ids = [row[0] for row in rows]
    # pgvector's binary form: two 16-bit words (dimensions, unused), then big-endian float4s.
    scope_vectors = np.frombuffer(b"".join(bytes(row[1]) for row in rows), dtype=">f4")
    scope_vectors = scope_vectors.reshape(len(rows), -1)[:, 1:].astype(np.float32)
    new_vectors = np.asarray([memory.embedding for memory in memories], dtype=np.float32)
    similarity = _unit(new_vectors) @ _unit(scope_vectors).T
    position = {pk: index for index, pk in enumerate(ids)}
    for row, memory in enumerate(memories):
        if memory.pk in position:
            similarity[row, position[memory.pk]] = -np.inf  # not its own neighbour
    # The nearest NEIGHBOURS of each, of those alike enough to be told of: the pairs past the floor
    # (few: a comparison over the matrix, not a partial sort of every row), nearest first a row.
    rows_at, columns_at = np.nonzero(similarity >= floor)
    if not rows_at.size:
        return found
    values = similarity[rows_at, columns_at]
    order = np.lexsort((-values, rows_at))
    rows_at, columns_at, values = rows_at[order], columns_at[order], values[order]
    kept = np.arange(rows_at.size) - np.searchsorted(rows_at, rows_at) < NEIGHBOURS
    rows_at, columns_at, values = rows_at[kept], columns_at[kept], values[kept]
    with connection.cursor() as cursor:
        cursor.execute(_ROWS_SQL, [list({ids[column] for column in columns_at.tolist()})])
        details = {row[0]: row[1:] for row in cursor.fetchall()}
    for row, column, value in zip(rows_at.tolist(), columns_at.tolist(), values.tolist(), strict=True):
        if ids[column] in details:
            found[row].append((ids[column], *details[ids[column]], value))
    return found


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def _neighbours(organization_id: int, written: list[Memory], floor: float) -> list[list[tuple[Any, ...]]]:
    """Each memory's nearest neighbours of its scope at least ``floor`` alike, as (id, title, content,
    type, status, similarity)."""
    scopes: dict[tuple[str, Any, Any], list[int]] = {}
    for position, memory in enumerate(written):
        scopes.setdefault((memory.scope_type, memory.repository_id, memory.owner_id), []).append(position)
    found: list[list[tuple[Any, ...]]] = [[] for _ in written]
    for scope, positions in list(scopes.items()):
        if len(positions) >= MATRIX_AT_LEAST:
            with savepoint_if_in_transaction():
                by_matrix = _by_matrix(organization_id, scope, [written[i] for i in positions], floor)
            if by_matrix is not None:
                for i, rows in zip(positions, by_matrix, strict=True):
                    found[i] = rows
                del scopes[scope]
    if not scopes:
        return found
    # The organization's own graph is walked by the distance it is built over (the similarity told
    # is the stored vectors' all the same).
    nearest = tenant_indexes.nearest_first(graphs.precision(organization_id), "m.embedding", "w.embedding")
    statements = [_SETTINGS_SQL]
    params: dict[str, Any] = {"organization": organization_id, "limit": NEIGHBOURS, "floor": floor}
    for g, ((scope_type, repository, owner), positions) in enumerate(scopes.items()):
        statements.append(
            _NEIGHBOURS_SQL.format(
                g=g,
                nearest=nearest,
                repository="m.repository_id IS NULL" if repository is None else f"m.repository_id = %(repository{g})s",
                owner="m.owner_id IS NULL" if owner is None else f"m.owner_id = %(owner{g})s",
            )
        )
        params |= {
            # Their vectors are read where they were stored, not sent again as text to be parsed.
            f"ids{g}": [written[i].pk for i in positions],
            f"scope_type{g}": scope_type,
            f"repository{g}": repository,
            f"owner{g}": owner,
        }
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
        for memory, rows in zip(written, _neighbours(organization_id, written, floor), strict=True):
            hints[memory.pk] = _classified(memory, rows)
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

ConflictReporter = Callable[[Sequence[tuple[Memory, list[Hint]]]], object]
_reporters: list[ConflictReporter] = []


def conflict_reporter_set(reporter: ConflictReporter) -> None:
    """Who turns writes' conflicts into work for curators (lifecycle sets it when it loads)."""
    _reporters[:] = [reporter]


def report_conflicts(written: Sequence[tuple[Memory, list[Hint]]]) -> None:
    """Hand new memories' conflicts (of one organization) to the curators' side. A failure there
    never fails the writes: the consolidation worker finds the same pairs on its next run."""
    written = [(memory, conflicts) for memory, conflicts in written if conflicts]
    if not written or not _reporters:
        return
    try:
        with savepoint_if_in_transaction():
            _reporters[0](written)
    except Exception:
        logger.exception(
            "the contradictions of memories %s were left to the consolidation worker",
            ", ".join(str(memory.pk) for memory, _ in written),
        )
