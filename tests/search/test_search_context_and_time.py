"""What the ranking model reads beyond similarity and words: a memory's session context, its date
against the dates a query names, and whether it says when for a "when" question."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from memories.models import Memory
from memories.search.model import HYBRID, using
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import search

QUESTION = "Maria: Great news, John! How often do you all work out together as a family?"
REPLY = "John: Thanks, Maria! Three times a week; it keeps us on track."
CHATTER = [
    "Maria: I adopted a shelter dog last month.",
    "John: My old area was hit by a flood last week.",
    "Maria: I baked cookies for the homeless shelter.",
]


def _conversation(make_memory: MemoryFactory, session: str | None, start: datetime) -> dict[str, Any]:
    """The turns written one after another, in a session when given."""
    written = {}
    for n, text in enumerate([*CHATTER, QUESTION, REPLY]):
        source = {"session": session} if session else {}
        memory = make_memory(current_content=text, source=source)
        at = start + timedelta(seconds=30 * n)
        Memory.objects.filter(pk=memory.pk).update(created_at=at, updated_at=at)
        written[text] = memory.pk
    return written


def test_a_reply_is_found_through_the_turn_it_answers(acme: Tenant, make_memory: MemoryFactory) -> None:
    in_session = _conversation(make_memory, "chat-7", datetime(2024, 5, 2, 10, tzinfo=UTC))
    loose = _conversation(make_memory, None, datetime(2024, 5, 9, 10, tzinfo=UTC))

    # Outside a session a memory is a statement, scored by a model of its own (tests/search/
    # test_search_score.py); one model for both shows what the session context alone adds.
    with using(statement=HYBRID):
        page = search(acme.agent, query="How often does John work out with his family?", min_score=0, limit=50)
    scores = {hit.memory.pk: hit.score for hit in page.hits}
    features = {hit.memory.pk: hit for hit in page.hits}

    # The reply shares few words with the question asked of it; its session context is what it is missing.
    assert scores[in_session[REPLY]] > scores[loose[REPLY]]  # type: ignore[operator]
    assert features[in_session[REPLY]].memory.current_content == REPLY
    # The turn before it matched by itself, with or without a session.
    assert scores[in_session[QUESTION]] == scores[loose[QUESTION]]  # type: ignore[comparison-overlap]


def test_a_session_neighbour_joins_the_results(acme: Tenant, make_memory: MemoryFactory) -> None:
    written = _conversation(make_memory, "chat-8", datetime(2024, 5, 2, 10, tzinfo=UTC))

    page = search(acme.agent, query="How often does John work out with his family?", limit=3)

    assert set(page.hits[i].memory.pk for i in range(2)) == {written[QUESTION], written[REPLY]}


def test_a_query_naming_a_month_prefers_memories_of_that_month(acme: Tenant, make_memory: MemoryFactory) -> None:
    may = make_memory(current_content="We deployed the billing service to the new cluster.", importance=3)
    march = make_memory(current_content="We deployed the billing service to the new cluster.", importance=3)
    Memory.objects.filter(pk=may.pk).update(valid_from=datetime(2024, 5, 14, tzinfo=UTC))
    Memory.objects.filter(pk=march.pk).update(valid_from=datetime(2024, 3, 3, tzinfo=UTC))

    page = search(acme.agent, query="What did we deploy in May 2024?", min_score=0)

    # Same words, same importance, and the March one is newer: only the date puts May first.
    assert [hit.memory.pk for hit in page.hits[:2]] == [may.pk, march.pk]
    assert page.hits[0].score > page.hits[1].score  # type: ignore[operator]


def test_a_when_question_prefers_the_memory_that_says_when(acme: Tenant, make_memory: MemoryFactory) -> None:
    dated = make_memory(current_content="The team offsite in Lisbon happens next month.", importance=2).pk
    undated = make_memory(current_content="The team offsite happens in Lisbon.", importance=8).pk

    when = {hit.memory.pk: hit.score for hit in search(acme.agent, query="When is the team offsite?", min_score=0).hits}
    where = {
        hit.memory.pk: hit.score for hit in search(acme.agent, query="Where is the team offsite?", min_score=0).hits
    }

    assert when[dated] / when[undated] > where[dated] / where[undated]  # type: ignore[operator]
