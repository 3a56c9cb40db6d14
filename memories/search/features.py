"""The ranking model's features (params.Features) for hybrid search's candidates.

One query scores the pool, and finds and scores the session neighbours of its best. It is plain
SQL: it runs on every search, and building it with the ORM cost more than running it.

Both retrievers' candidates get every feature: cosine similarity, keyword coverage (BM25 over the
query's IDF mass), whether they say when (for a "when" question) and whether they date from the
day, month or year the query names.

A memory written in a conversation session (``source.session``) is read in its context: its
``context_*`` features are the best similarity and keyword coverage among it and the memories
written just before and just after it in that session, within what the caller may see and filters
to (a memory without a session is its own context). Those neighbours join the candidates
themselves, as a reply is often what answers a question another turn asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from memories.models import Memory
from memories.search.caches import ScopeSQL, created_micros, in_session, standing
from memories.search.keyword import QueryTerms, bm25_sql
from memories.search.params import Candidate, Features
from memories.search.questions import STATES_TIME_PATTERN, QueryTraits
from memory_platform.db.prepared import prepared_cursor
from memory_platform.db.replicas import read_connection, reading


@dataclass(frozen=True)
class QueryContext:
    """What the features are measured against: the query's vector (pgvector's text of it,
    memories.fields.vector_text), words and traits."""

    vector: str | None
    terms: QueryTerms
    traits: QueryTraits


# What the query brings, once: its vector, lexemes and their IDFs, the average memory length, the
# pattern of words that say when (for a "when" question) and the days it names (NULL when not).
_QUERY = """WITH q AS (SELECT %s::vector AS v, %s::text[] AS lexemes, %s::float8[] AS idf, %s::float8 AS avg_length,
  %s::text AS says_when, %s::date AS first_day, %s::date AS last_day)"""


def _features(x: str) -> str:
    """The features of memory ``x``: cosine similarity, BM25 (as memories.search.keyword computes it),
    whether it says when, whether it is from the days the query names; after its id, importance and
    created_at (in microseconds); then its standing (the review prior, memories.search.fusion.boost)
    and whether it was written in a conversation session (which model scores it)."""
    return (
        f"{x}.id, {x}.importance, {created_micros(x)}, 1 - ({x}.embedding <=> q.v), {bm25_sql(x)},"
        f" {x}.current_content ~* q.says_when,"
        f" (coalesce({x}.valid_from, {x}.created_at) AT TIME ZONE 'UTC')::date BETWEEN q.first_day AND q.last_day,"
        f" {standing(x)}, {in_session(x)}"
    )


# The memory written just before (after) m in its session, among those the search may return: the
# scope's own SQL is the inner FROM, so the neighbour is one the caller may see and filters to.
_NEIGHBOR = """LEFT JOIN LATERAL (SELECT s.id FROM ({scope}) s
  WHERE m.id = ANY(%s::uuid[]) AND m.source ->> 'session' IS NOT NULL AND s.organization_id = m.organization_id
    AND s.source ->> 'session' = m.source ->> 'session' AND s.created_at {op} m.created_at
  ORDER BY s.created_at {order}, s.id {order} LIMIT 1) {x} ON true"""

# The pool with each one's neighbours (NULL when it has none or is not among those asked about);
# the features are then measured once a memory, the pool's and the neighbours' alike.
_AROUND = """, around AS (SELECT m.id, b.id AS before_id, a.id AS after_id FROM memories_memory m
{before}
{after}
WHERE m.id = ANY(%s::uuid[]))"""

_WIDTH = 9  # id, importance, created_at, the four features, the status and whether in a session


def _query_params(context: QueryContext) -> list[Any]:
    terms, traits = context.terms, context.traits
    span = traits.span or (None, None)
    return [
        context.vector,
        terms.lexemes,
        terms.idf,
        terms.avg_length,
        STATES_TIME_PATTERN if traits.asks_when else None,
        *span,
    ]


def _candidate(row: tuple[Any, ...], mass: float) -> Candidate:
    pk, importance, created, cosine, bm25, states_time, in_span, status, session = row
    similarity = None if cosine is None else float(cosine)
    keyword = float(bm25 or 0.0)
    features = Features(
        similarity=similarity or 0.0,
        keyword=keyword / mass,
        context_similarity=similarity or 0.0,
        context_keyword=keyword / mass,
        states_time=1.0 if states_time else 0.0,
        in_span=1.0 if in_span else 0.0,
    )
    return Candidate(
        pk=pk,
        importance=importance,
        created=created,
        similarity=similarity,
        keyword=keyword or None,
        features=features,
        status=status,
        in_session=bool(session),
    )


def _rows(scope: ScopeSQL, pool: list[Any], context: QueryContext, neighbors_of: list[Any]) -> list[Any]:
    """One row per memory of the pool and per neighbour: its features, then, for a pool memory among
    ``neighbors_of`` written in a session, the ids of the memories just before and after it there."""
    params = _query_params(context)
    if not neighbors_of:  # no neighbours to find: no lateral joins to plan (they cost more than the rest)
        pooled = "m.id = ANY(%s::uuid[])"
        params.append(pool)
        sql = f"{_QUERY} SELECT {_features('m')}, NULL, NULL FROM q CROSS JOIN memories_memory m WHERE {pooled}"  # noqa: S608 - our SQL, values as parameters
    else:
        before = _NEIGHBOR.format(scope=scope.sql, op="<", order="DESC", x="b")
        after = _NEIGHBOR.format(scope=scope.sql, op=">", order="ASC", x="a")
        around = _AROUND.format(before=before, after=after)
        sql = (
            f"{_QUERY}{around} SELECT {_features('m')}, around.before_id, around.after_id"  # noqa: S608 - our SQL and the scope's, values as parameters
            " FROM q CROSS JOIN memories_memory m LEFT JOIN around ON around.id = m.id WHERE m.id = ANY(ARRAY("
            "SELECT id FROM around UNION SELECT before_id FROM around UNION SELECT after_id FROM around))"
        )
        params += [*scope.params, neighbors_of, *scope.params, neighbors_of, pool]
    # Without neighbours, a lookup by ids whose plan does not depend on them: prepared. The lateral
    # joins through the scope are planned for the values at hand.
    with read_connection().cursor() if neighbors_of else prepared_cursor(reading()) as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


def candidate_features(
    scope: QuerySet[Memory] | ScopeSQL, pool: list[Any], context: QueryContext, *, neighbors_of: list[Any]
) -> list[Candidate]:
    """The pool's memories with their features; and, for those of ``neighbors_of`` written in a
    session, the memories written just before and after them there, which join the candidates.

    A memory's context features take in those of its neighbours that are among these. The pool comes
    from the search's scope, so only the neighbours are looked up through it.
    """
    mass = context.terms.mass or 1.0
    found: dict[Any, Candidate] = {}
    around: dict[Any, set[Any]] = {}
    for row in _rows(ScopeSQL.of(scope), pool, context, neighbors_of):
        found[row[0]] = _candidate(row[:_WIDTH], mass)
        for side in row[_WIDTH:]:
            if side is not None:
                around.setdefault(row[0], set()).add(side)
                around.setdefault(side, set()).add(row[0])
    for pk, others in around.items():
        features = found[pk].features
        neighbours = [f for f in (found[other].features for other in others) if f is not None]
        if features is not None and neighbours:
            features.context_similarity = max(features.similarity, *(f.similarity for f in neighbours))
            features.context_keyword = max(features.keyword, *(f.keyword for f in neighbours))
    return list(found.values())
