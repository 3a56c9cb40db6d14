"""When every word of a question is common in the organization, the keyword retriever reads the
memories holding two of its rarest words first, and reads the rest only when too few hold two."""

from __future__ import annotations

from typing import Any

import pytest

from memories.batch import memory_batch_create
from memories.search import keyword as search_module
from memories.search.keyword import QueryTerms, keyword_candidates, paired_selection
from memories.selectors import memory_visible_queryset
from tests.conftest import Tenant
from tests.search.conftest import hit_ids, page_through

QUERY = "production deploy pipeline rollback"


def test_the_pair_is_of_the_two_rarest_matching_words() -> None:
    lexemes = ["product", "deploy", "pipelin", "rollback", "zebra", "servic"]
    frequencies = {"product": 9000, "deploy": 4000, "pipelin": 3000, "rollback": 2500, "zebra": 0, "servic": 8000}
    idf = [0.5, 1.2, 1.4, 1.5, 9.0, 0.7]
    chosen = paired_selection(lexemes, frequencies, idf)

    assert chosen is not None
    assert chosen.lexemes == ["rollback", "pipelin"]  # "zebra" matches nothing
    assert chosen.pairs == (("rollback", "pipelin"),)
    assert chosen.tsquery() == "('rollback' & 'pipelin')"
    # Left out: a memory holding one of the pair once (at best the rarer, 1.5), or only the commoner
    # words (1.2 + 0.7 + 0.5).
    assert chosen.left_out_score == pytest.approx(2.4)
    # One matching word makes no pair.
    assert paired_selection(["deploy", "zebra"], frequencies, [1.2, 9.0]) is None


def test_any_two_of_more_words_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "KEYWORD_PAIRED_TERMS", 3)
    chosen = paired_selection(["a", "b", "c", "d"], {"a": 10, "b": 20, "c": 30, "d": 40}, [4.0, 3.0, 2.0, 1.0])

    assert chosen is not None
    assert chosen.pairs == (("a", "b"), ("a", "c"), ("b", "c"))
    assert chosen.tsquery() == "('a' & 'b') | ('a' & 'c') | ('b' & 'c')"
    assert chosen.left_out_score == pytest.approx(4.0)


def _write(tenant: Tenant, texts: list[str]) -> list[str]:
    entries = [{"scope_type": "organization", "memory_type": "fact", "current_content": t} for t in texts]
    return [str(r.memory.pk) for r in memory_batch_create(principal=tenant.agent, entries=entries) if r.memory]


@pytest.fixture
def common_words(acme: Tenant) -> dict[str, list[str]]:
    """Every word of QUERY in many memories; three hold its two rarest, "production" and "rollback"."""
    one = _write(acme, [f"Service {n} has a {w} step of its own." for n, w in enumerate(["deploy", "pipeline"] * 12)])
    both = _write(
        acme,
        [
            "The production rollback drill runs each week on the deploy pipeline.",
            "A production rollback needs the on-call engineer.",
            "Every rollback in production is announced in the incident channel.",
        ],
    )
    return {"one": one, "both": both}


@pytest.fixture
def conditions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tsquery of each statement the keyword retriever runs."""
    seen: list[str] = []
    original = search_module._KeywordSelection.tsquery

    def tsquery(self: search_module._KeywordSelection) -> str:
        seen.append(original(self))
        return seen[-1]

    monkeypatch.setattr(search_module._KeywordSelection, "tsquery", tsquery)
    return seen


def _keywords(tenant: Tenant, k: int, settings: Any, budget: int) -> list[str]:
    settings.SEARCH_KEYWORD_MATCH_BUDGET = budget
    terms = QueryTerms.of(tenant.organization.pk, QUERY)
    found, _ = keyword_candidates(memory_visible_queryset(tenant.agent), terms, k)
    return [str(c.pk) for c in found]


def test_memories_holding_two_words_are_read_first_and_ranked_as_before(
    acme: Tenant,
    common_words: dict[str, list[str]],
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    conditions: list[str],
) -> None:
    # The rarest word selects alone (3 memories; the next would take it past 5), over a budget of 2.
    monkeypatch.setattr(search_module, "KEYWORD_SCORED_ROWS", 5)
    paired = _keywords(acme, 3, settings, budget=2)
    assert len(conditions) == 1 and " & " in conditions[0]  # one statement: the pairs'
    everything = _keywords(acme, 3, settings, budget=0)
    assert " & " not in conditions[1]

    # The three memories holding both words are BM25's best three either way.
    assert paired == everything
    assert set(paired) == set(common_words["both"])


def test_too_few_holding_two_words_reads_the_rest(
    acme: Tenant, common_words: dict[str, list[str]], settings: Any, conditions: list[str]
) -> None:
    # Every word selects (27 memories match, over the budget of 5), and only 3 hold two words.
    paired = _keywords(acme, 10, settings, budget=5)
    assert [" & " in condition for condition in conditions] == [True, False]

    assert paired == _keywords(acme, 10, settings, budget=0)
    assert set(common_words["both"]) < set(paired)  # and seven holding one word
    assert len(paired) == 10


def test_keyword_mode_still_pages_through_every_match(
    acme: Tenant, common_words: dict[str, list[str]], settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_module, "KEYWORD_SCORED_ROWS", 5)
    settings.SEARCH_KEYWORD_MATCH_BUDGET = 5
    pages = page_through(acme.agent, query=QUERY, mode="keyword", limit=2, min_score=0)

    found = [str(pk) for page in pages for pk in hit_ids(page)]
    assert set(found[:3]) == set(common_words["both"])
    assert sorted(found) == sorted(common_words["one"] + common_words["both"])


def test_an_organization_no_larger_than_the_budget_reads_as_before(
    acme: Tenant, common_words: dict[str, list[str]], settings: Any, conditions: list[str]
) -> None:
    # Every word selects: 30 matches over a budget of 28, but the organization holds only 27 memories.
    found = _keywords(acme, 3, settings, budget=28)

    assert conditions and not any(" & " in condition for condition in conditions)
    assert found == _keywords(acme, 3, settings, budget=0)
