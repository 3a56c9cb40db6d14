"""The keyword retriever: PostgreSQL full text (any query term may match), scored with BM25.

PostgreSQL's ``ts_rank`` has no inverse document frequency, so we compute Okapi BM25 ourselves
from the stored tsvector (term frequencies) and per-organization document frequencies. In a large
organization the rarer query terms pick the candidates (within a budget of rows to score) and,
past a few hundred matches, an IDF-weighted ts_rank picks which of them BM25 scores; every query
term still counts in each candidate's score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from memories.models import FULL_TEXT_CONFIG, Memory
from memories.search.caches import ScopeSQL, created_micros, in_session, standing, term_statistics
from memories.search.params import Candidate
from memories.search.term_counts import quote_lexeme, text_match
from memory_platform.db.prepared import bound_cursor, prepared_cursor
from memory_platform.db.replicas import reading


def query_lexemes(query: str, names: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """The query's lexemes, and those of the names it mentions (memories.search.questions)."""
    with prepared_cursor(reading()) as cursor:
        cursor.execute(
            "SELECT ARRAY(SELECT lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) ORDER BY lexeme), "
            "ARRAY(SELECT lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) ORDER BY lexeme)",
            [FULL_TEXT_CONFIG, query, FULL_TEXT_CONFIG, " ".join(names)],
        )
        lexemes, name_lexemes = cursor.fetchone()
    return list(lexemes), list(name_lexemes)


def idf(total: int, frequency: int) -> float:
    return math.log(1 + (total - frequency + 0.5) / (frequency + 0.5))


@dataclass(frozen=True)
class TermCounts:
    """The statistics a query's terms were weighed by: memories counted, their average length, and
    how many hold each term (a search cursor carries them to the next page)."""

    total: int
    avg_length: float
    frequencies: dict[str, int]


@dataclass(frozen=True)
class QueryTerms:
    """The query's words as the organization's full text sees them: lexemes, their IDFs, and how many
    of the names among them no memory of the organization contains at all."""

    lexemes: list[str]
    name_lexemes: list[str]
    idf: list[float]
    frequencies: dict[str, int]
    total: int
    avg_length: float

    @classmethod
    def of(
        cls, organization_id: int, query: str, names: tuple[str, ...] = (), *, counted: TermCounts | None = None
    ) -> QueryTerms:
        """The query's terms weighed by the organization's statistics now, or by ``counted`` (what an
        earlier page of the same search was weighed by, so that a write between pages moves no score)."""
        if counted is None and term_statistics.known_small(organization_id):
            # A small organization's memories are counted at every search: with the query's words, in one statement.
            small = term_statistics.small_terms(organization_id, query, " ".join(names))
            lexemes, name_lexemes, frequencies = small.lexemes, small.name_lexemes, small.frequencies
            count, avg_length = small.total, small.avg_length
        else:
            lexemes, name_lexemes = query_lexemes(query, names)
            wanted = sorted(set(lexemes) | set(name_lexemes))
            if counted is None:
                count, avg_length = term_statistics.corpus(organization_id)
                frequencies = term_statistics.document_frequencies(organization_id, wanted, count) if wanted else {}
            else:
                count, avg_length = counted.total, counted.avg_length
                frequencies = {lexeme: counted.frequencies.get(lexeme, 0) for lexeme in wanted}
        total = max(count, 1)
        weights = [idf(total, frequencies.get(lx, 0)) for lx in lexemes]
        return cls(lexemes, name_lexemes, weights, frequencies, total, max(avg_length, 1.0))

    @property
    def counts(self) -> TermCounts:
        return TermCounts(self.total, self.avg_length, dict(self.frequencies))

    @property
    def mass(self) -> float:
        """What BM25 gives a memory holding every query word once, at average length: the sum of the IDFs."""
        return sum(self.idf)

    @property
    def names_unknown(self) -> float:
        """The share of the query's names that no memory of the organization mentions."""
        if not self.name_lexemes:
            return 0.0
        return sum(1 for lx in self.name_lexemes if not self.frequencies.get(lx)) / len(self.name_lexemes)

    def bm25_sql(self, row: str) -> tuple[str, list[Any]]:
        """BM25 of the memory ``row`` (an alias of memories_memory in the query) and its parameters."""
        terms = "(SELECT %s::text[] AS lexemes, %s::float8[] AS idf, %s AS avg_length) q, "
        return bm25_sql(row, terms=terms), [self.lexemes, self.idf, self.avg_length]


# Okapi BM25 over the stored tsvector: term frequency from each lexeme's positions, document
# length from its lexeme count. k1 = 0.9, b = 0.4 suit short memories (on LoCoMo they beat the
# textbook 1.2 / 0.75 by 0.015 R@10 alone, 0.013 fused). ``q`` holds the query's lexemes, their IDFs
# and the average length. Only the memory's lexemes that are query terms are unnested: setweight
# marks their positions A (every other D) and ts_filter keeps those, so a memory costs its few
# matching lexemes rather than all of its vector (a join on the whole unnested vector cost ~9 us a
# memory). A lexeme without positions counts for nothing, as before.
_BM25_SQL = """
(SELECT coalesce(sum(
    q.idf[array_position(q.lexemes, t.lexeme)] * cardinality(t.positions) * 1.9
    / (cardinality(t.positions) + 0.9 * (0.6 + 0.4 * length({x}.search_vector) / q.avg_length))
  ), 0)
 FROM {terms}unnest(ts_filter(setweight(setweight({x}.search_vector, 'D'), 'A', q.lexemes), '{{a}}')) AS t)
"""


def bm25_sql(row: str, *, terms: str = "") -> str:
    """BM25 of the memory ``row``; ``terms`` is a FROM item named ``q`` (and a comma) unless the query
    around it has one (memories.search.features)."""
    return _BM25_SQL.format(x=row, terms=terms)


# How many memories BM25 scores for one query: about KEYWORD_SCORED_ROWS. Scoring cost ~10 us a
# matching memory (~3 us since it unnests only the query's terms), and in a large organization a
# common term matches thousands (one stem matched 9.2k of 49k rows: 118 ms). So query terms pick
# candidates rarest first, while the memories they match stay within that budget; the more common
# ones left over still count in the score of every candidate, they just do not bring in memories
# that match nothing rarer (those score low anyway).
# A term in at most RARE_TERM_SHARE of the organization's memories always picks candidates. In a
# small organization every term does: LoCoMo's conversations (~550 memories) are ranked as before.
KEYWORD_SCORED_ROWS = 600
RARE_TERM_SHARE = 0.01
# When the selecting terms still match more memories than this (or 3x the candidates wanted),
# ts_rank picks that many first and BM25 ranks them: a rare term can match over a thousand.
# 150 rather than 300: LoCoMo R@10 0.757 against 0.758, MRR 0.557 for both, and the keyword
# query of a 6.5k-memory organization 1.46 ms against 2.0.
KEYWORD_PRE_RANK = 150
# One selecting term's part of that pre-rank: its IDF times its ts_rank in the memory.
_TERM_RANK = "%s * ts_rank(s.search_vector, to_tsquery('simple', %s), 1)"


@dataclass(frozen=True)
class _KeywordSelection:
    lexemes: list[str]
    # Left out: an estimate of the best score a memory matching only them would have had (each
    # once, at average length: the sum of their IDFs). It stands in for the weakest of the best
    # candidates when scaling scores, which would otherwise be one of those memories.
    left_out_score: float | None = None
    # When given, the memories holding both words of one of these pairs are the candidates, not
    # those holding any of ``lexemes`` (which are then the pairs' words).
    pairs: tuple[tuple[str, str], ...] = ()

    def tsquery(self) -> str:
        """The candidates' condition, as a tsquery of the 'simple' configuration."""
        if self.pairs:
            return " | ".join(f"({quote_lexeme(a)} & {quote_lexeme(b)})" for a, b in self.pairs)
        return " | ".join(quote_lexeme(lx) for lx in self.lexemes)


def selecting_lexemes(
    lexemes: list[str], frequencies: dict[str, int], total: int, idf: list[float]
) -> _KeywordSelection:
    """The query terms whose matches become keyword candidates."""
    weights = dict(zip(lexemes, idf, strict=True))
    matched = sorted((frequencies[lx], lx) for lx in lexemes if frequencies.get(lx, 0) > 0)
    selecting: list[str] = []
    left_out: list[str] = []
    rows = 0
    for frequency, lexeme in matched:
        if not selecting or frequency <= RARE_TERM_SHARE * total or rows + frequency <= KEYWORD_SCORED_ROWS:
            selecting.append(lexeme)
            rows += frequency
        else:
            left_out.append(lexeme)
    if not left_out:
        return _KeywordSelection(lexemes)
    return _KeywordSelection(selecting, left_out_score=sum(weights[lx] for lx in left_out))


# When even the rarest terms match more memories than SEARCH_KEYWORD_MATCH_BUDGET (every word of
# the question is common in a large organization), the memories holding two of its
# KEYWORD_PAIRED_TERMS rarest words are read first: the GIN index intersects the words' lists, so
# the database reads those memories' rows rather than every memory holding the rarest word, and
# they are the ones BM25 ranks first (a memory holding one common word scores that word's low IDF).
# Only when fewer than the candidates wanted hold both does the search read the rest. Measured with
# bench/keyword_scale.py on the largest organization of bench/scale.py's 200,000 memories (136,533
# rows), 300 questions, against BM25 over every match (bench/results/2026-12-04): the rarest word's
# matches 7.8 ms p50, 21 ms p95, 0.29 of the exact top 10 among the candidates; the two rarest words
# together 3.8 ms, 12 ms, 0.47; any two of the three rarest 6.2 ms, 17 ms, 0.55.
KEYWORD_PAIRED_TERMS = 2


def paired_selection(lexemes: list[str], frequencies: dict[str, int], idf: list[float]) -> _KeywordSelection | None:
    """The memories holding at least two of the KEYWORD_PAIRED_TERMS rarest matching words; None
    when fewer than two words match. Left out: a memory holding one of them once (the largest of
    their IDFs), or only the commoner words (the sum of theirs)."""
    weights = dict(zip(lexemes, idf, strict=True))
    matched = [lx for _, lx in sorted((frequencies[lx], lx) for lx in set(lexemes) if frequencies.get(lx, 0) > 0)]
    if len(matched) < 2:
        return None
    paired, rest = matched[:KEYWORD_PAIRED_TERMS], matched[KEYWORD_PAIRED_TERMS:]
    pairs = tuple((a, b) for i, a in enumerate(paired) for b in paired[i + 1 :])
    left_out = max(*(weights[lx] for lx in paired), sum(weights[lx] for lx in rest))
    return _KeywordSelection(paired, left_out_score=left_out, pairs=pairs)


def keyword_candidates(
    scope: QuerySet[Memory] | ScopeSQL, terms: QueryTerms, k: int, *, at_least: int = 0
) -> tuple[list[Candidate], float | None]:
    """BM25's best ``k``, and the score floor for scaling when common terms were left out (see above).

    When the rarer terms' matches number fewer than ``at_least``, the common terms pick candidates
    too: a keyword search pages through every memory matching any term.
    """
    lexemes, idf, frequencies, total = terms.lexemes, terms.idf, terms.frequencies, terms.total
    if not lexemes:
        return [], None
    scope = ScopeSQL.of(scope)
    matches = text_match("s.search_vector", scan=total <= settings.SEARCH_KEYWORD_SCAN_LIMIT)
    bm25, bm25_params = terms.bm25_sql("p")
    ranked = f"SELECT p.id, p.importance, p.created_at, p.source, {bm25} AS bm25, p.status"
    weight = dict(zip(lexemes, idf, strict=True))

    def best(selection: _KeywordSelection) -> list[tuple[Any, int, int, float, bool, str]]:
        pre_rank = max(KEYWORD_PRE_RANK, 3 * k)
        params = [*bm25_params, *scope.params, selection.tsquery()]
        columns = f"s.id, s.importance, s.created_at, s.source, s.search_vector, {standing('s')} AS status"
        rows = f"SELECT {columns} FROM ({scope.sql}) s WHERE {matches}"  # noqa: S608 - our SQL and the scope's, values as parameters
        # How many match, as far as the words' counts tell (pairs: not known before reading them).
        matching = None if selection.pairs else sum(frequencies.get(lx, 0) for lx in selection.lexemes)
        if matching is None or matching > pre_rank:
            # Many matches: BM25 (a subquery a row) scores only the best by each term's ts_rank
            # (C, length-normalised) weighted by the term's IDF.
            estimate = " + ".join(["0.0"] + [_TERM_RANK] * len(selection.lexemes))
            rows += f" ORDER BY {estimate} DESC LIMIT %s"
            params += [value for lx in selection.lexemes for value in (weight[lx], quote_lexeme(lx))] + [pre_rank]
        # The memories' own rows come along, not their ids to look up again; what the candidates
        # carry besides (created_at in microseconds, the session) is read of the best k alone.
        order = "ORDER BY k.bm25 DESC, k.importance DESC, k.created_at DESC, k.id"
        sql = (
            f"SELECT k.id, k.importance, {created_micros('k')}, k.bm25, {in_session('k')}, k.status FROM ("  # noqa: S608 - as above
            f"{ranked} FROM ({rows}) p ORDER BY 5 DESC, 2 DESC, 3 DESC, 1 LIMIT %s) k {order}"
        )
        # Bound apart from its text: the lexemes and weights are not parsed as literals.
        with bound_cursor(reading()) as cursor:
            cursor.execute(sql, [*params, k])
            return list(cursor.fetchall())

    selection = selecting_lexemes(lexemes, frequencies, total, idf)
    rows = []
    budget = settings.SEARCH_KEYWORD_MATCH_BUDGET
    # Only in an organization larger than the budget: a smaller one (every quality set's) ranks as before.
    if budget and total > budget and sum(frequencies.get(lx, 0) for lx in selection.lexemes) > budget:
        paired = paired_selection(lexemes, frequencies, idf)
        if paired is not None and len(found := best(paired)) >= max(k, at_least):
            selection, rows = paired, found
    if not rows:
        rows = best(selection)
    if selection.left_out_score is not None and len(rows) < at_least:
        selection = _KeywordSelection(lexemes)
        rows = best(selection)
    candidates = [
        Candidate(
            pk=pk,
            importance=importance,
            created=created,
            keyword=score,
            keyword_rank=rank,
            in_session=session,
            status=status,
        )
        for rank, (pk, importance, created, score, session, status) in enumerate(rows, start=1)
    ]
    # With enough candidates from the rarer terms, the best of them are what scaling looks at anyway.
    floor = selection.left_out_score if len(rows) < settings.SEARCH_CANDIDATES else None
    return candidates, floor
