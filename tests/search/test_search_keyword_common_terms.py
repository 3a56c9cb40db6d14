"""Query terms pick keyword candidates rarest first, within a budget of memories to score; a common
term left over does not bring in candidates but still counts in every candidate's BM25 score.
Keyword mode alone still pages through every memory matching any term."""

from __future__ import annotations

import pytest

from memories.batch import memory_batch_create
from memories.search import keyword as search_module
from memories.search.keyword import selecting_lexemes
from memories.selectors import memory_visible_queryset
from tests.conftest import Tenant
from tests.search.conftest import hit_ids, page_through, search


def test_terms_select_rarest_first_within_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "KEYWORD_SCORED_ROWS", 600)
    monkeypatch.setattr(search_module, "RARE_TERM_SHARE", 0.01)
    lexemes = ["deploy", "canari", "zebra", "servic"]
    frequencies = {"deploy": 9000, "canari": 20, "zebra": 0, "servic": 500}
    chosen = selecting_lexemes(lexemes, frequencies, 50_000, [0.1, 2.0, 3.0, 1.0])
    assert chosen.lexemes == ["canari", "servic"]  # 20 + 500 rows fit; 9000 more do not
    assert chosen.left_out_score == pytest.approx(0.1)

    # The rarest matching term always selects, whatever it costs.
    alone = selecting_lexemes(["deploy", "zebra"], frequencies, 50_000, [0.1, 3.0])
    assert alone.lexemes == ["deploy", "zebra"] and alone.left_out_score is None
    # A term in at most 1% of the memories selects even over the budget.
    rare = selecting_lexemes(["canari", "servic"], {"canari": 400, "servic": 450}, 50_000, [2.0, 1.0])
    assert rare.lexemes == ["canari", "servic"] and rare.left_out_score is None


def test_small_organizations_keep_every_term() -> None:
    # Under the default budget: every term of a LoCoMo-sized organization selects.
    chosen = selecting_lexemes(["carolin", "research"], {"carolin": 275, "research": 12}, 550, [0.7, 3.5])
    assert chosen.lexemes == ["carolin", "research"] and chosen.left_out_score is None


@pytest.fixture
def corpus(acme: Tenant, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setattr(search_module, "KEYWORD_SCORED_ROWS", 10)
    texts = [f"Service {n} deploys from the main branch every morning." for n in range(24)]
    texts += [
        "Canary deploys run for thirty minutes.",
        "Canary birds sing loudly in the office kitchen every single morning.",
    ]
    entries = [{"scope_type": "organization", "memory_type": "fact", "current_content": t} for t in texts]
    results = memory_batch_create(principal=acme.agent, entries=entries)
    return [str(r.memory.pk) for r in results if r.memory is not None]


def test_hybrid_scores_the_rare_matches_with_every_term(acme: Tenant, corpus: list[str]) -> None:
    page = search(acme.agent, query="canary deploys", mode="hybrid", limit=30, min_score=0)

    keyword_scored = {str(hit.memory.pk): hit.keyword_score for hit in page.hits if hit.keyword_score is not None}
    # Both terms count: the canary memory that also deploys scores above the one that does not, and
    # both above the memories with only the common term.
    assert keyword_scored[corpus[-2]] > keyword_scored[corpus[-1]]
    assert [str(hit.memory.pk) for hit in page.hits[:2]] == corpus[-2:]
    # With min_score 0 the rest of the scope still follows (the unscored tail).
    assert {str(pk) for pk in hit_ids(page)} == set(corpus)


def test_keyword_mode_still_reaches_every_match(acme: Tenant, corpus: list[str]) -> None:
    pages = page_through(acme.agent, query="canary deploys", mode="keyword", limit=5, min_score=0)

    found = [str(pk) for page in pages for pk in hit_ids(page)]
    assert found[:2] == [corpus[-2], corpus[-1]]
    assert sorted(found) == sorted(corpus)
    assert len(found) == len(set(found))


def _terms(tenant: Tenant) -> search_module.QueryTerms:
    return search_module.QueryTerms.of(tenant.organization.pk, "canary deploys")


def test_many_matches_are_pre_ranked_before_bm25(
    acme: Tenant, corpus: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    scope = memory_visible_queryset(acme.agent)
    monkeypatch.setattr(search_module, "KEYWORD_SCORED_ROWS", 10**6)  # every term selects: 26 matches
    monkeypatch.setattr(search_module, "KEYWORD_PRE_RANK", 10**6)
    exact, _ = search_module.keyword_candidates(scope, _terms(acme), 3)
    monkeypatch.setattr(search_module, "KEYWORD_PRE_RANK", 3)  # ts_rank keeps the best 9 of 26
    pre_ranked, _ = search_module.keyword_candidates(scope, _terms(acme), 3)

    assert [c.pk for c in pre_ranked][:2] == [c.pk for c in exact][:2]
    assert [str(c.pk) for c in pre_ranked][:2] == [corpus[-2], corpus[-1]]
    assert len(pre_ranked) == 3
