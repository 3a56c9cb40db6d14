"""The search's process-wide state, behind one object: ``search_caches.reset()`` forgets all of it.

Scope sizes and term statistics outlive a request (and a test's rolled-back transaction); so does
the access tally the search adds to (memories.access), which reset() writes out and empties.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from memories.access import flush_access
from memories.models import Memory
from memories.search import tenant_indexes
from memories.search.term_counts import TermStatistics
from memories.search.words import forget_words
from memory_platform.db import replicas
from memory_platform.db.replicas import read_connection


class ScopeSizes:
    """Whether a search scope is small enough to scan exactly, remembered briefly per organization.

    Counting up to ``SEARCH_EXACT_SCAN_LIMIT + 1`` rows of a large tenant costs ~5 to 10 ms a
    search; the answer changes only when memories are written, so it is kept for ``ttl_seconds``
    and dropped when this process writes one of the organization's memories in a way that could
    change it (other processes' writes show after the TTL; a stale answer only picks the other,
    still correct, path). A new memory cannot make a large scope small, so creating memories keeps
    "large" answers: a busy organization writes all the time, and forgetting on every write had its
    searches count again one time in five under a mixed load (5 ms of the database each).
    """

    ttl_seconds = 60.0
    max_entries = 10_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # key -> (when, generation counted at, small)
        self._answers: dict[tuple[Any, ...], tuple[float, tuple[int, int], bool]] = {}
        # organization -> (writes of any kind, writes that may have shrunk a scope)
        self._generations: dict[int, tuple[int, int]] = {}

    def is_small(self, organization_id: int | None, scope: QuerySet[Memory] | ScopeSQL, limit: int) -> bool:
        """Whether the scope holds at most ``limit`` memories with an embedding."""
        scope = ScopeSQL.of(scope)
        if organization_id is None:
            return self._count(scope, limit) <= limit
        key = (organization_id, limit, scope.sql, tuple(str(p) for p in scope.params))
        now = time.monotonic()
        with self._lock:
            generation = self._generations.get(organization_id, (0, 0))
            cached = self._answers.get(key)
        if cached and now - cached[0] < self.ttl_seconds:
            # A small answer holds until anything is written; a large one until something may shrink it.
            counted_at, small = cached[1], cached[2]
            if (counted_at[0] == generation[0]) if small else (counted_at[1] == generation[1]):
                return small
        small = self._count(scope, limit) <= limit
        with self._lock:
            if len(self._answers) >= self.max_entries:
                self._answers.clear()
            self._answers[key] = (now, generation, small)
        return small

    @staticmethod
    def _count(scope: ScopeSQL, limit: int) -> int:
        # No ORDER BY: the model's ordering would sort the scope.
        sql = f"SELECT count(*) FROM (SELECT 1 FROM ({scope.sql}) s WHERE s.embedding IS NOT NULL LIMIT %s) c"  # noqa: S608 - the scope's SQL, values as parameters
        with read_connection().cursor() as cursor:
            cursor.execute(sql, [*scope.params, limit + 1])
            return int(cursor.fetchone()[0])

    def invalidate(self, organization_id: int, *, grown_only: bool = False) -> None:
        """Forget the organization's answers that a write may have changed: with ``grown_only``
        (memories were only added) the "small" ones, otherwise all of them."""
        with self._lock:
            written, shrunk = self._generations.get(organization_id, (0, 0))
            self._generations[organization_id] = (written + 1, shrunk if grown_only else shrunk + 1)

    def clear(self) -> None:
        with self._lock:
            self._answers.clear()
            self._generations.clear()


class Graphs:
    """Which organizations have a graph of their own, and over which precision of their vectors
    (memories.search.tenant_indexes.graph_precisions), read for all of them at once and kept for
    ``ttl_seconds``: the retrievers' ORDER BY must name the expression the organization's graph is
    over for PostgreSQL to walk it. Kept for less than the sweep's interval, so that a graph the
    sweep replaced is dropped only once every process walks its replacement; a stale answer only
    sorts the organization's rows (exact, slower) until it is read again."""

    ttl_seconds = 30.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._read_at = float("-inf")
        self._read_after = -1  # tenant_indexes.changes when they were read
        self._precisions: dict[int, str] = {}

    def precision(self, organization_id: int | None) -> str | None:
        if organization_id is None:
            return None
        now = time.monotonic()
        changes = tenant_indexes.changes  # this process's own builds show at once
        with self._lock:
            fresh = now - self._read_at < self.ttl_seconds and self._read_after == changes
            precisions = self._precisions
        if not fresh:
            precisions = tenant_indexes.graph_precisions()
            with self._lock:
                self._read_at, self._read_after, self._precisions = now, changes, precisions
        return precisions.get(organization_id)

    def clear(self) -> None:
        with self._lock:
            self._read_at, self._read_after, self._precisions = float("-inf"), -1, {}


def scope_as_sql(scope: QuerySet[Any], *columns: str) -> tuple[str, list[Any]]:
    """The scope as a SELECT of ``columns`` (unordered) to use as a FROM item: PostgreSQL pulls such
    a subquery up into the query around it, so its filters plan as if written there (the HNSW and
    GIN index scans included), and the retrievers' SQL is written once instead of compiled by the
    ORM on every search."""
    sql, params = scope.values(*columns).order_by().query.sql_with_params()
    return sql, list(params)


# Every column of the scope a retriever or the features read; unread ones cost nothing, as the
# subquery is pulled up into the query around it.
SCOPE_COLUMNS = (
    "id",
    "organization_id",
    "importance",
    "created_at",
    "source",
    "search_vector",
    "embedding",
    "status",
    "review_flags",
)


@dataclass(frozen=True)
class ScopeSQL:
    """A search's scope compiled once (scope_as_sql of SCOPE_COLUMNS), for all of its queries:
    compiling the scope's queryset costs more Python than running most of them costs PostgreSQL.

    ``arms`` are the parts whose union is the scope, each a (sql, params) of its own: a query that
    orders and limits (the vector retriever) does so per arm, so that each arm is planned with the
    index that serves it; ``sql`` and ``params`` are their UNION ALL, for queries that filter."""

    sql: str
    params: tuple[Any, ...]
    arms: tuple[tuple[str, tuple[Any, ...]], ...] = ()

    @classmethod
    def of(cls, scope: QuerySet[Memory] | ScopeSQL) -> ScopeSQL:
        if isinstance(scope, ScopeSQL):
            return scope
        return cls.union(scope)

    @classmethod
    def union(cls, *arms: QuerySet[Memory]) -> ScopeSQL:
        """The scope that is the union of ``arms``, which must not overlap (a search's: its
        organization's memories and others' system-wide ones, memories.selectors.memory_visible_arms)."""
        compiled = tuple((sql, tuple(params)) for sql, params in (scope_as_sql(arm, *SCOPE_COLUMNS) for arm in arms))
        return cls(
            " UNION ALL ".join(sql for sql, _ in compiled), tuple(p for _, params in compiled for p in params), compiled
        )


def created_micros(row: str) -> str:
    """SQL for the memory ``row``'s created_at in whole microseconds since the epoch (params.micros):
    an integer reads ~50 times faster than psycopg parses a timestamp, on hundreds of candidates."""
    return f"(extract(epoch FROM {row}.created_at) * 1000000)::int8"


def standing(row: str) -> str:
    """SQL for the standing the review prior weighs (memories.search.fusion.review_prior): the memory
    ``row``'s status, or ``held`` while it is unreviewed and flagged as text that reads as instructions
    to the agents reading it (memories.trust.apply_policy; a curator's review clears the flag)."""
    return (
        f"CASE WHEN {row}.status IN ('draft', 'active')"
        f' AND {row}.review_flags @> \'[{{"code": "instructions"}}]\'::jsonb'
        f" THEN 'held' ELSE {row}.status END"
    )


def in_session(row: str) -> str:
    """SQL for whether the memory ``row`` was written in a conversation session (memories.search.features)."""
    return f"({row}.source ->> 'session') IS NOT NULL"


class CompiledScopes:
    """Search scopes compiled to SQL, remembered per process by what they are compiled from.

    A scope's SQL is a pure function of who is searching (organization, user) and the filters
    asked for: building the queryset and compiling it cost ~0.9 ms of CPU a search, of about 7.
    The SQL holds no moment of its own (validity is checked against statement_timestamp()), and
    the values it binds are the key's, so an entry never goes stale; the oldest is dropped when full.
    """

    max_entries = 4096

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._compiled: dict[Hashable, ScopeSQL] = {}

    def get(self, key: Hashable, compile_: Callable[[], tuple[QuerySet[Memory], ...]]) -> ScopeSQL:
        """The scope whose arms ``compile_`` gives (ScopeSQL.union), compiled once."""
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = ScopeSQL.union(*compile_())
            with self._lock:
                if len(self._compiled) >= self.max_entries:
                    self._compiled.pop(next(iter(self._compiled)), None)
                self._compiled[key] = compiled
        return compiled

    def clear(self) -> None:
        with self._lock:
            self._compiled.clear()


class SearchCaches:
    def __init__(self) -> None:
        self.scope_sizes = ScopeSizes()
        self.term_statistics = TermStatistics()
        self.compiled_scopes = CompiledScopes()
        self.graphs = Graphs()

    def reset(self) -> None:
        """Forget every cached answer and write out the access tally: a fresh process, as far as search sees."""
        self.term_statistics.clear()
        self.scope_sizes.clear()
        self.compiled_scopes.clear()
        self.graphs.clear()
        forget_words()
        flush_access()


search_caches = SearchCaches()
scope_sizes = search_caches.scope_sizes
compiled_scopes = search_caches.compiled_scopes
graphs = search_caches.graphs
term_statistics = search_caches.term_statistics


def memories_changed(organization_id: int, *, created_only: bool = False) -> None:
    """Called by the services after writing an organization's memories: forget the scope sizes the
    write may have changed (``created_only``: it only added memories, so large scopes stay large)."""
    scope_sizes.invalidate(organization_id, grown_only=created_only)
    # Another thread may count the old state before this transaction commits: forget again then.
    transaction.on_commit(lambda: scope_sizes.invalidate(organization_id, grown_only=created_only))
    replicas.written(organization_id)  # its searches read a replica only once it has replayed this
