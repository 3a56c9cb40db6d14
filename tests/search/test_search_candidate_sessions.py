"""Both retrievers tell which of their candidates were written in a conversation session: the
ranking model looks up session neighbours for those alone, so a flag missing from either
retriever would silently cost a memory its context."""

from __future__ import annotations

import uuid

import pytest

from memories.embeddings import query_vector
from memories.search.caches import ScopeSQL
from memories.search.keyword import QueryTerms, keyword_candidates
from memories.search.vector import vector_candidates
from memories.selectors import memory_visible_queryset
from tests.conftest import MemoryFactory, Tenant

QUERY = "when does the payroll export run?"
TURNS = {
    "Ana: The payroll export runs every Friday at noon.": {"session": "chat-1"},
    "Ben: And the payroll export for contractors?": {"session": "chat-1"},
    "The payroll export is retried twice when it fails.": {},
    "The payroll export writes a CSV to the finance share.": {"tool": "import"},
}


@pytest.fixture
def written(make_memory: MemoryFactory) -> dict[uuid.UUID, bool]:
    """Each memory's id, and whether it was written in a session."""
    return {make_memory(current_content=text, source=source).pk: "session" in source for text, source in TURNS.items()}


def test_the_keyword_candidates_say_which_are_in_a_session(acme: Tenant, written: dict[uuid.UUID, bool]) -> None:
    scope = ScopeSQL.of(memory_visible_queryset(acme.agent))

    found, _ = keyword_candidates(scope, QueryTerms.of(acme.organization.pk, QUERY), 10)

    assert {c.pk: c.in_session for c in found} == written


def test_the_vector_candidates_say_which_are_in_a_session(acme: Tenant, written: dict[uuid.UUID, bool]) -> None:
    scope = ScopeSQL.of(memory_visible_queryset(acme.agent))

    found = vector_candidates(scope, query_vector(QUERY), 10, organization_id=acme.organization.pk)

    assert {c.pk: c.in_session for c in found} == written
