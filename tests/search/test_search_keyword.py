"""Keyword search: exact identifiers, codes and rare names come first; BM25 scoring; any term matches."""

from __future__ import annotations

import pytest

from memories.models import Memory
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, search

# Each target sits among look-alikes that a sentence embedding blurs together.
LOOKALIKES = {
    "ERR-4471": (
        "ERR-4471 is raised when the payment gateway rejects a card.",
        [
            "ERR-4417 is raised when the payment gateway times out.",
            "ERR-4470 is raised when the bank declines a card.",
            "ERR-4711 is raised when the card number fails the Luhn check.",
        ],
    ),
    "JIRA PAY-2231": (
        "JIRA PAY-2231 tracks the refund rounding bug.",
        [
            "JIRA PAY-2213 tracks the refund currency bug.",
            "JIRA PAY-2232 tracks the refund email bug.",
            "JIRA PAY-1231 tracks the payout rounding bug.",
        ],
    ),
    "Wojciechowska": (
        "Ms. Wojciechowska signs off every schema migration.",
        [
            "Mr. Wojciechowski leads the data platform team.",
            "Anna Wojcik owns the billing service.",
            "Piotr Wojciechowicz is the on-call engineer this week.",
        ],
    ),
}


@pytest.fixture
def targets(make_memory: MemoryFactory) -> dict[str, Memory]:
    found: dict[str, Memory] = {}
    for query, (target, lookalikes) in LOOKALIKES.items():
        # Look-alikes matter more, so the target can only win on the match itself.
        for text in lookalikes:
            make_memory(current_content=text, importance=8)
        found[query] = make_memory(current_content=target)
    return found


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
@pytest.mark.parametrize("query", list(LOOKALIKES))
def test_exact_identifier_is_found_first(acme: Tenant, targets: dict[str, Memory], mode: str, query: str) -> None:
    page = search(acme.agent, query=query, mode=mode)

    assert hit_ids(page)[0] == targets[query].pk, [hit.memory.current_content for hit in page.hits[:3]]
    assert page.hits[0].keyword_score is not None
    others = [hit.keyword_score for hit in page.hits[1:] if hit.keyword_score is not None]
    assert all(page.hits[0].keyword_score > score for score in others)


def test_a_code_only_one_memory_contains_wins_hybrid_search(acme: Tenant, make_memory: MemoryFactory) -> None:
    # The embedding model prefers the error-code memories for a bare ticket number; the one keyword
    # match must still come first, even though it is the only keyword match.
    make_memory(current_content="ERR-4417 is raised when the payment gateway times out.", importance=9)
    make_memory(current_content="ERR-4471 is raised when the payment gateway rejects a card.", importance=9)
    make_memory(current_content="ERR-4711 is raised when the card number fails the Luhn check.", importance=9)
    ticket = make_memory(current_content="JIRA PAY-2231 tracks the refund rounding bug.")

    vector_page = search(acme.agent, query="PAY-2231", mode="vector", min_score=0)
    hybrid_page = search(acme.agent, query="PAY-2231", mode="hybrid", min_score=0)

    assert hit_ids(vector_page)[0] != ticket.pk  # what makes this case worth testing
    assert hit_ids(hybrid_page)[0] == ticket.pk
    assert hit_ids(search(acme.agent, query="PAY-2231"))[0] == ticket.pk  # above the default floor too
    assert hybrid_page.hits[0].relevance is not None and hybrid_page.hits[1].relevance is not None
    assert hybrid_page.hits[0].relevance > hybrid_page.hits[1].relevance


def test_a_lone_keyword_match_has_full_relevance(acme: Tenant, make_memory: MemoryFactory) -> None:
    make_memory(current_content="Our frontend uses React with TypeScript.")
    target = make_memory(current_content="Ms. Wojciechowska signs off every schema migration.")

    page = search(acme.agent, query="Wojciechowska", mode="keyword")

    assert hit_ids(page) == [target.pk]
    assert page.hits[0].relevance is not None and page.hits[0].relevance > 0


def test_a_rarer_matching_term_outranks_a_common_one(acme: Tenant, make_memory: MemoryFactory) -> None:
    # "invoice" is in many memories, "flamingo" in one: BM25's inverse document frequency
    # must make the flamingo memory the better match for a query naming both.
    for n in range(8):
        make_memory(current_content=f"Invoice batch {n} is exported to the ledger nightly.")
    common = make_memory(current_content="The invoice template lives in the shared drive.")
    rare = make_memory(current_content="The flamingo template lives in the shared drive.")

    page = search(acme.agent, query="invoice flamingo", mode="keyword", limit=50)

    ids = hit_ids(page)
    assert ids[0] == rare.pk
    assert common.pk in ids
    scores = {hit.memory.pk: hit.keyword_score for hit in page.hits}
    assert scores[rare.pk] > scores[common.pk]  # type: ignore[operator]


def test_more_occurrences_of_a_term_score_higher(acme: Tenant, make_memory: MemoryFactory) -> None:
    once = make_memory(current_content="Retries use exponential backoff for the upload worker queue.")
    thrice = make_memory(current_content="Retries: backoff on errors, backoff on timeouts, backoff on throttling.")

    page = search(acme.agent, query="backoff", mode="keyword")

    assert hit_ids(page) == [thrice.pk, once.pk]


def test_any_query_term_is_enough_to_match(acme: Tenant, make_memory: MemoryFactory) -> None:
    target = make_memory(current_content="The kangaroo service resizes uploaded images.")
    make_memory(current_content="Our frontend uses React with TypeScript.")

    page = search(acme.agent, query="quarterly budget spreadsheet kangaroo", mode="keyword")

    assert hit_ids(page) == [target.pk]


def test_words_match_across_inflections(acme: Tenant, make_memory: MemoryFactory) -> None:
    target = make_memory(current_content="The staging cluster is rebooted every Sunday night.")

    page = search(acme.agent, query="reboots of clusters", mode="keyword")

    assert hit_ids(page) == [target.pk]


def test_a_query_of_only_stop_words_and_punctuation_finds_nothing_by_keyword(
    acme: Tenant, make_memory: MemoryFactory
) -> None:
    make_memory(current_content="The staging cluster is rebooted every Sunday night.")

    for query in ["the of and", "&|!", "(", "'", "\\", "a:b", "<->", "x:*"]:
        assert search(acme.agent, query=query, mode="keyword").hits == [], query


@pytest.mark.parametrize("query", ["C++", "O'Brien", "100%", "state-of-the-art", "e-mail", "foo.bar@example.com"])
def test_punctuation_in_a_query_is_not_query_syntax(acme: Tenant, make_memory: MemoryFactory, query: str) -> None:
    target = make_memory(
        current_content="O'Brien's state-of-the-art C++ e-mail relay runs at 100% for foo.bar@example.com."
    )
    make_memory(current_content="Our frontend uses React with TypeScript.")

    page = search(acme.agent, query=query, mode="keyword")

    assert hit_ids(page) == [target.pk]
