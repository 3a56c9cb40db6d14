"""Helpers for search tests: run a search from raw interface input, page through results."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from memories.models import Memory
from memories.search import SearchPage, SearchParams, memory_search, search_caches
from organizations.models import Membership, Role, User
from organizations.principal import Principal
from organizations.tokens import principal_for_token, token_create
from tests.conftest import Tenant


def search(principal: Principal, **values: Any) -> SearchPage:
    """Search the way every interface does: raw values validated by SearchParams.build."""
    return memory_search(principal, SearchParams.build(**values))


def hit_ids(page: SearchPage) -> list[uuid.UUID]:
    return [hit.memory.pk for hit in page.hits]


def page_through(principal: Principal, *, max_pages: int = 200, **values: Any) -> list[SearchPage]:
    """Every page of a search, following next_cursor until it runs out."""
    pages = [search(principal, **values)]
    while pages[-1].next_cursor is not None:
        assert len(pages) < max_pages, "next_cursor never ran out"
        pages.append(search(principal, cursor=pages[-1].next_cursor, **values))
    return pages


def ids_of(memories: Iterator[Memory] | list[Memory]) -> set[uuid.UUID]:
    return {memory.pk for memory in memories}


@pytest.fixture(autouse=True)
def _fresh_search_state(db: Any) -> None:
    # The search's process state outlives a test's rolled-back transaction.
    search_caches.reset()


@pytest.fixture
def colleague(acme: Tenant) -> Principal:
    """Another person in acme, with a personal token."""
    user = User.objects.create_user(username="acme-colleague", password="unused-password-1")
    Membership.objects.create(user=user, organization=acme.organization, role=Role.AGENT)
    operator = Principal.for_operator(acme.organization, "tests")
    return principal_for_token(token_create(principal=operator, role=Role.AGENT, user=user).raw)
