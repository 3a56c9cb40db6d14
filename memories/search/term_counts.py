"""How many of an organization's memories hold each word: the counts BM25 weighs a query's words
by, read through the full-text index or row by row, and kept briefly where they drift slowly."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from memories.models import FULL_TEXT_CONFIG
from memory_platform.db.replicas import read_connection


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


@dataclass(frozen=True)
class SmallTerms:
    """A query's lexemes (and its names') with a small organization's statistics for them."""

    lexemes: list[str]
    name_lexemes: list[str]
    total: int
    avg_length: float
    frequencies: dict[str, int]


# In one statement: the query's lexemes as query_lexemes reads them, the organization's memories
# counted as corpus() counts them, and the memories holding each lexeme as
# documents_holding(scan=True) counts them (the lexeme quoted as quote_lexeme quotes it).
_SMALL_TERMS_SQL = r"""
WITH q AS MATERIALIZED (
  SELECT ARRAY(SELECT lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) ORDER BY lexeme) AS lexemes,
         ARRAY(SELECT lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) ORDER BY lexeme) AS names),
m AS MATERIALIZED (
  SELECT coalesce(search_vector, ''::tsvector) AS v FROM memories_memory
  WHERE organization_id = %s AND deleted_at IS NULL),
w AS MATERIALIZED (
  SELECT lexeme, to_tsquery('simple', '''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''') AS t
  FROM (SELECT DISTINCT unnest(q.lexemes || q.names) AS lexeme FROM q) d)
SELECT q.lexemes, q.names, (SELECT count(*) FROM m), (SELECT coalesce(avg(length(m.v)), 1) FROM m),
       ARRAY(SELECT lexeme FROM w ORDER BY lexeme),
       ARRAY(SELECT (SELECT count(*) FROM m WHERE m.v @@ w.t) FROM w ORDER BY lexeme)
FROM q
"""


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

    def known_small(self, organization_id: int) -> bool:
        """Whether the organization was last counted at most SEARCH_KEYWORD_SCAN_LIMIT memories."""
        with self._lock:
            cached = self._corpus.get(organization_id)
        return cached is not None and self._small(cached[1])

    def small_terms(self, organization_id: int, text: str, names: str) -> SmallTerms:
        """What query_lexemes, corpus() and document_frequencies() would say in a small
        organization, in one round trip instead of three (its memories are counted at every search
        anyway). Remembered as corpus() remembers: an organization grown past the limit is counted
        the large way at its next search."""
        with read_connection().cursor() as cursor:
            cursor.execute(_SMALL_TERMS_SQL, [FULL_TEXT_CONFIG, text, FULL_TEXT_CONFIG, names, organization_id])
            lexemes, name_lexemes, count, avg_length, words, frequencies = cursor.fetchone()
        with self._lock:
            self._corpus[organization_id] = (time.monotonic(), int(count), float(avg_length))
        held = {word: int(n) for word, n in zip(words, frequencies, strict=True)}
        return SmallTerms(list(lexemes), list(name_lexemes), int(count), float(avg_length), held)

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
