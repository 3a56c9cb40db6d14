"""Every result's score: in [0, 1], ordered with the results, higher for a better match, absolute (the
same whatever else the organization holds), and null without a query."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest

from memories.batch import memory_batch_create
from memories.search.fusion import review_prior
from memories.search.model import HYBRID, KEYWORD, STATEMENT, VECTOR, Model, using
from memories.search.params import Features
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import search

QUERY = "how do we rotate the database credentials?"
BOTH = "We rotate the database credentials before every external audit."
MEANING_ONLY = "Postgres passwords and API secrets are replaced automatically every ninety days."
UNRELATED = [
    "The cafeteria serves vegetarian lunch on Wednesdays.",
    "Our frontend uses React with TypeScript.",
    "The office closes at noon on public holidays.",
    "Two approvals are needed before merging a pull request.",
]


@pytest.fixture
def corpus(make_memory: MemoryFactory) -> dict[str, object]:
    return {text: make_memory(current_content=text).pk for text in [*UNRELATED, BOTH, MEANING_ONLY]}


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_scores_lie_between_0_and_1_and_follow_the_order(acme: Tenant, corpus: dict[str, object], mode: str) -> None:
    page = search(acme.agent, query=QUERY, mode=mode, min_score=0, limit=50)

    scores = [hit.score for hit in page.hits]
    assert scores and all(score is not None and 0 <= score <= 1 for score in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    # Without boosts the results are ordered by the score times the review prior, the same for all of
    # these drafts (tests/trust/test_curated_outranks_unreviewed.py has the rest).
    assert [hit.relevance for hit in page.hits] == pytest.approx([s * review_prior("draft") for s in scores], abs=1e-6)


def test_a_better_match_scores_higher(acme: Tenant, corpus: dict[str, object]) -> None:
    scores = {hit.memory.current_content: hit.score for hit in search(acme.agent, query=QUERY, min_score=0).hits}

    assert scores[BOTH] > scores[MEANING_ONLY] > max(scores[text] for text in UNRELATED)  # type: ignore[operator]


def test_browsing_without_a_query_has_no_scores(acme: Tenant, corpus: dict[str, object]) -> None:
    page = search(acme.agent, limit=50)

    assert len(page.hits) == len(corpus)
    assert {hit.score for hit in page.hits} == {None}


def test_a_score_does_not_depend_on_what_else_the_organization_holds(acme: Tenant, corpus: dict[str, object]) -> None:
    before = {hit.memory.pk: hit.score for hit in search(acme.agent, query=QUERY, min_score=0).hits}
    entries = [
        {
            "scope_type": "organization",
            "memory_type": "fact",
            "current_content": f"Warehouse shelf {n} holds {n * 3} boxes of printer paper.",
        }
        for n in range(150)
    ]
    assert all(result.ok for result in memory_batch_create(principal=acme.agent, entries=entries))

    after = {hit.memory.pk: hit.score for hit in search(acme.agent, query=QUERY, min_score=0).hits}

    # Twenty-five times as many memories: the best matches keep about the score they had. (Scaled
    # per query, the best would have stayed at the top of the scale in either case.)
    for text in (BOTH, MEANING_ONLY):
        pk = corpus[text]
        assert after[pk] == pytest.approx(before[pk], rel=0.35), text


@pytest.mark.parametrize("statement_model", [True, False])
def test_a_conversation_turn_and_a_statement_are_each_scored_by_their_own_model(
    acme: Tenant, make_memory: MemoryFactory, settings: Any, statement_model: bool
) -> None:
    """With SEARCH_STATEMENT_MODEL; without it, the conversation model scores both."""
    settings.SEARCH_STATEMENT_MODEL = statement_model
    statement = make_memory(current_content=BOTH).pk
    turn = make_memory(
        current_content="We rotate the database credentials before each external audit.", source={"session": "call-1"}
    ).pk

    def scores() -> tuple[float, float]:
        found = {hit.memory.pk: hit.score for hit in search(acme.agent, query=QUERY, min_score=0).hits}
        return found[statement], found[turn]  # type: ignore[return-value]

    shipped = scores()
    with using(statement=HYBRID):  # the statement scored as a turn: only its score moves
        as_turn = scores()
    with using(hybrid=STATEMENT):  # the turn scored as a statement: only its score moves
        as_statement = scores()

    assert as_turn[1] == pytest.approx(shipped[1])
    assert (as_turn[0] != pytest.approx(shipped[0])) is statement_model
    if statement_model:
        assert as_statement[1] != pytest.approx(shipped[1]) and as_statement[0] == pytest.approx(shipped[0])
    else:  # one model for both: it moves both
        assert as_statement[0] != pytest.approx(shipped[0]) and as_statement[1] != pytest.approx(shipped[1])


@pytest.mark.parametrize(
    "model", [HYBRID, STATEMENT, VECTOR, KEYWORD], ids=["hybrid", "statement", "vector", "keyword"]
)
def test_the_score_rises_with_every_feature(model: Model) -> None:
    # Monotonic: more similarity, more of the query's words, names, time, context never lower it.
    for field in fields(Features):
        if field.name not in model.weights:
            continue
        scores = [model.score(model.rank_value(Features(**{field.name: value}))) for value in (0, 0.25, 0.5, 1.0)]
        assert scores == sorted(set(scores)), field.name  # strictly rising
        assert scores[0] > 0 and scores[-1] < 1


def test_the_score_falls_when_the_query_names_what_the_organization_has_never_heard_of() -> None:
    value = HYBRID.rank_value(Features(similarity=0.5, keyword=0.5))

    assert HYBRID.score(value, names_unknown=1.0) < HYBRID.score(value, names_unknown=0.0)
    assert 0 <= HYBRID.score(-1000.0) < HYBRID.score(value) < HYBRID.score(1000.0) <= 1
