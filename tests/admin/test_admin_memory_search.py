"""The memory list's search box: by meaning (the product's hybrid search, best match first) or by words."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from memories.services import memory_deprecate
from organizations.models import Role, User
from tests.admin.conftest import StaffFactory
from tests.conftest import MemoryFactory, Tenant

pytestmark = pytest.mark.real_embedder

Login = Callable[[User], Client]
CHANGELIST = "admin:memories_memory_changelist"
QUESTION = "can I ship on friday afternoon?"


@pytest.fixture
def curator_client(acme: Tenant, make_staff: StaffFactory, login: Login) -> Client:
    return login(make_staff("carol", acme.organization, Role.CURATOR))


@pytest.fixture
def rules(make_memory: MemoryFactory) -> dict[str, str]:
    texts = {
        "friday": "Never deploy to production on Friday afternoons; wait for Monday.",
        "cents": "Payments store money as integer cents, never floats.",
        "ruff": "Python code is linted with ruff before every commit.",
        "postgres": "We chose PostgreSQL for every service that needs a database.",
    }
    return {key: str(make_memory(current_content=text, status="active").pk) for key, text in texts.items()}


def _found(client: Client, **query: str) -> list[str]:
    response = client.get(reverse(CHANGELIST), query)
    assert response.status_code == 200
    return [str(memory.pk) for memory in response.context["cl"].result_list]


def test_a_question_finds_the_rule_first_by_meaning(rules: dict[str, str], curator_client: Client) -> None:
    found = _found(curator_client, q=QUESTION)

    assert found[0] == rules["friday"]
    # By words, the question's words are not all in any memory.
    assert _found(curator_client, q=QUESTION, mode="words") == []
    assert _found(curator_client, q="ruff", mode="words") == [rules["ruff"]]


def test_meaning_is_the_default_and_keeps_the_filters(
    acme: Tenant, rules: dict[str, str], curator_client: Client
) -> None:
    memory_deprecate(principal=acme.curator, memory_id=rules["friday"])

    assert rules["friday"] not in _found(curator_client, q=QUESTION, status__exact="active")
    assert _found(curator_client, q=QUESTION, status__exact="deprecated") == [rules["friday"]]


def test_the_search_form_offers_both_ways_and_remembers_the_choice(
    rules: dict[str, str], curator_client: Client
) -> None:
    page = curator_client.get(reverse(CHANGELIST), {"q": "ruff", "mode": "words"}).content.decode()

    assert '<option value="words" selected>by words</option>' in page
    assert '<option value="meaning">by meaning</option>' in page
