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

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet

from memories.access import flush_access
from memories.models import Memory
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


def quote_lexeme(lexeme: str) -> str:
    """A lexeme as a tsquery operand."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def text_match(column: str, *, scan: bool) -> str:
    """``column @@ <tsquery parameter>``; with ``scan``, written so that no GIN index is used.

    A small organization's rows are read through its organization index and matched one by one
    (under a millisecond); a large one's through its own GIN index (memories.search.tenant_indexes),
    which the planner picks when the query's words are rare enough. (When one GIN index held every
    organization's rows, a common word yielded tens of thousands of them, of which a small
    organization held a handful: at a million memories 63 ms against about 1 ms for a 794-row
    organization read row by row.)"""
    target = f"coalesce({column}, ''::tsvector)" if scan else column
    return f"{target} @@ to_tsquery('simple', %s)"


def documents_holding(
    table: str, organization_id: int, lexemes: list[str], where: str = "", *, scan: bool = False
) -> list[tuple[str, int]]:
    """How many of an organization's rows of ``table`` (a table with ``organization_id`` and a
    ``search_vector``; ``where`` narrows them) hold each lexeme: one count per term, in a single
    round trip; through the GIN index, or with ``scan`` through the organization's rows (text_match)."""
    condition = f" AND {where}" if where else ""
    if scan:
        # One statement planned once, its subquery run per lexeme (planning a UNION of one count
        # per lexeme costs more than counting a small organization's rows).
        sql = (
            "WITH l AS MATERIALIZED (SELECT lexeme, to_tsquery('simple', quoted) AS q "  # noqa: S608 - names
            "FROM unnest(%s::text[], %s::text[]) AS u(lexeme, quoted)) "
            f"SELECT l.lexeme, (SELECT count(*) FROM {table} WHERE organization_id = %s{condition} "
            "AND coalesce(search_vector, ''::tsvector) @@ l.q) FROM l"
        )
        with read_connection().cursor() as cursor:
            cursor.execute(sql, [lexemes, [quote_lexeme(lexeme) for lexeme in lexemes], organization_id])
            return [(lexeme, int(count)) for lexeme, count in cursor.fetchall()]
    parts = " UNION ALL ".join(
        f"SELECT %s, count(*) FROM {table} WHERE organization_id = %s{condition} "  # noqa: S608 - names, not input
        f"AND {text_match('search_vector', scan=False)}"
        for _ in lexemes
    )
    params: list[Any] = []
    for lexeme in lexemes:
        params += [lexeme, organization_id, quote_lexeme(lexeme)]
    with read_connection().cursor() as cursor:
        cursor.execute(parts, params)
        return [(lexeme, int(count)) for lexeme, count in cursor.fetchall()]


def words_held_by_many(table: str, organization_id: int, at_least: int, where: str = "") -> dict[str, int]:
    """How many of an organization's rows of ``table`` (``where`` narrows them) hold each word that
    ``at_least`` of them hold: one ts_stat pass over the rows, instead of a count per word."""
    condition = f" AND {where}" if where else ""
    with read_connection().cursor() as cursor:
        cursor.execute(
            f"SELECT word, ndoc FROM ts_stat(format('SELECT search_vector FROM {table} "  # noqa: S608 - names, not input
            f"WHERE organization_id = %%s{condition}', %s::bigint)) WHERE ndoc >= %s",
            [organization_id, at_least],
        )
        return {word: int(count) for word, count in cursor.fetchall()}


class TermStatistics:
    """Per-organization document counts for BM25's IDF, cached briefly where they drift slowly.

    An organization of fewer than ``SEARCH_KEYWORD_SCAN_LIMIT`` memories is counted on every search
    (a scan of its own rows, a fraction of a millisecond): each write moves its statistics by whole
    percents, and a new organization's first memories, counted once and kept, gave its next
    searches a corpus of one and scores below the relevance floor for minutes."""

    ttl_seconds = 300.0
    # In a larger organization, the words at least this share of its memories hold are counted all
    # at once (ts_stat over its rows, kept ttl_seconds): counting a common word one query at a time
    # reads every memory that holds it, 8.8 ms a search at 30k memories, where the one pass takes
    # 124 ms every five minutes. Rarer words are counted when asked for, through the organization's
    # own full-text index, and cost little.
    common_share = 0.005

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._corpus: dict[int, tuple[float, int, float]] = {}
        self._df: dict[tuple[int, str], tuple[float, int]] = {}
        self._common: dict[int, tuple[float, dict[str, int]]] = {}

    def corpus(self, organization_id: int) -> tuple[int, float]:
        now = time.monotonic()
        with self._lock:
            cached = self._corpus.get(organization_id)
        if cached and now - cached[0] < self.ttl_seconds and not self._small(cached[1]):
            return cached[1], cached[2]
        with read_connection().cursor() as cursor:
            cursor.execute(
                "SELECT count(*), coalesce(avg(length(search_vector)), 1) FROM memories_memory "
                "WHERE organization_id = %s AND deleted_at IS NULL",
                [organization_id],
            )
            count, avg_length = cursor.fetchone()
        with self._lock:
            self._corpus[organization_id] = (now, int(count), float(avg_length))
        return int(count), float(avg_length)

    @staticmethod
    def _small(count: int) -> bool:
        return count <= settings.SEARCH_KEYWORD_SCAN_LIMIT

    def document_frequencies(self, organization_id: int, lexemes: list[str], corpus_size: int) -> dict[str, int]:
        """How many of the organization's ``corpus_size`` memories (what corpus() said) hold each lexeme."""
        now = time.monotonic()
        result: dict[str, int] = {}
        missing: list[str] = []
        scan = self._small(corpus_size)
        with self._lock:
            for lexeme in lexemes:
                cached = self._df.get((organization_id, lexeme))
                if cached and now - cached[0] < self.ttl_seconds and not scan:
                    result[lexeme] = cached[1]
                else:
                    missing.append(lexeme)
        if missing and not scan:
            common = self._common_words(organization_id, corpus_size, now)
            result.update((lexeme, common[lexeme]) for lexeme in missing if lexeme in common)
            missing = [lexeme for lexeme in missing if lexeme not in common]
        if missing:
            rows = documents_holding("memories_memory", organization_id, missing, where="deleted_at IS NULL", scan=scan)
            with self._lock:
                for lexeme, count in rows:
                    result[lexeme] = int(count)
                    self._df[(organization_id, lexeme)] = (now, int(count))
                if len(self._df) > 200_000:
                    self._df.clear()
        return result

    def _common_words(self, organization_id: int, corpus_size: int, now: float) -> dict[str, int]:
        """How many of the organization's memories hold each word that common_share of them hold."""
        with self._lock:
            cached = self._common.get(organization_id)
        if cached and now - cached[0] < self.ttl_seconds:
            return cached[1]
        floor = max(int(corpus_size * self.common_share), 1)
        common = words_held_by_many("memories_memory", organization_id, floor, where="deleted_at IS NULL")
        with self._lock:
            self._common[organization_id] = (now, common)
        return common

    def clear(self) -> None:
        with self._lock:
            self._common.clear()
            self._corpus.clear()
            self._df.clear()


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

    def reset(self) -> None:
        """Forget every cached answer and write out the access tally: a fresh process, as far as search sees."""
        self.term_statistics.clear()
        self.scope_sizes.clear()
        self.compiled_scopes.clear()
        forget_words()
        flush_access()


search_caches = SearchCaches()
scope_sizes = search_caches.scope_sizes
compiled_scopes = search_caches.compiled_scopes
term_statistics = search_caches.term_statistics


def memories_changed(organization_id: int, *, created_only: bool = False) -> None:
    """Called by the services after writing an organization's memories: forget the scope sizes the
    write may have changed (``created_only``: it only added memories, so large scopes stay large)."""
    scope_sizes.invalidate(organization_id, grown_only=created_only)
    # Another thread may count the old state before this transaction commits: forget again then.
    transaction.on_commit(lambda: scope_sizes.invalidate(organization_id, grown_only=created_only))
    replicas.written(organization_id)  # its searches read a replica only once it has replayed this
