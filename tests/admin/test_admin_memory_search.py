"""The memory list's search box: by meaning (the product's hybrid search, best match first) or by words."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from memories.access import flush_access
from memories.decisions import memory_deprecate
from memories.models import MemoryAccess
from memories.search import SearchParams, memory_search
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


def test_a_curators_search_does_not_count_as_reads(acme: Tenant, rules: dict[str, str], curator_client: Client) -> None:
    """Freshness and access counts tell curators what agents use; a curator looking changes neither."""
    flush_access()
    assert rules["friday"] in _found(curator_client, q=QUESTION)
    assert rules["friday"] in _found(curator_client, q="friday", mode="words")
    flush_access()
    assert not MemoryAccess.objects.filter(memory_id__in=rules.values()).exists()
    # An agent's search does count.
    memory_search(acme.agent, SearchParams(query=QUESTION, limit=1))
    flush_access()
    assert MemoryAccess.objects.get(memory_id=rules["friday"]).access_count == 1


def test_a_type_filter_ranks_among_that_type_only(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    """The filters apply before the ranking: a weak match of the filtered type is still found when
    many better matches of other types exist."""
    for n in range(60):
        make_memory(current_content=f"Friday afternoon deploys to production are frozen, note {n}.")
    wanted = make_memory(memory_type="risk", current_content="Shipping late in the week risks weekend incidents.")

    assert _found(curator_client, q=QUESTION, memory_type__exact="risk") == [str(wanted.pk)]


def test_tags_show_as_chips(make_memory: MemoryFactory, curator_client: Client) -> None:
    make_memory(current_content="Tagged memory.", tags=["deploy", "friday", "ops", "risk", "weekend"])

    page = curator_client.get(reverse(CHANGELIST)).content.decode()

    assert '<span class="chip chip-tag">deploy</span> <span class="chip chip-tag">friday</span>' in page
    assert '<span class="chip chip-tag" title="risk, weekend">+2</span>' in page
    assert "&lt;span" not in page


def test_by_meaning_the_list_keeps_the_searchs_order_and_shows_its_scores(
    rules: dict[str, str], make_memory: MemoryFactory, curator_client: Client
) -> None:
    """The most important memory does not jump ahead of the best match, and no column claims to sort
    the list: the match column says how well each one answers."""
    window = str(
        make_memory(
            current_content="Hotfix deploys to staging are allowed on any day of the week.",
            importance=3, status="active",
        ).pk
    )  # fmt: skip

    response = curator_client.get(reverse(CHANGELIST), {"q": QUESTION})

    changelist = response.context["cl"]
    found = [str(memory.pk) for memory in changelist.result_list]
    assert found[0] == rules["friday"] and window in found
    assert changelist.get_ordering_field_columns() == {}
    scores = [memory.search_score for memory in changelist.result_list]
    assert scores == sorted(scores, reverse=True) and 0 < scores[-1] <= scores[0]
    page = response.content.decode()
    assert 'class="column-match"' in page and f"{scores[0]:.2f}" in page
    assert "sorted descending" not in page and "sorted ascending" not in page

    # Sorted by a column on purpose, the list says so and follows it.
    by_importance = curator_client.get(reverse(CHANGELIST), {"q": QUESTION, "o": "-3"})
    assert str(by_importance.context["cl"].result_list[0].pk) == window
    assert "sorted descending" in by_importance.content.decode()

    # Without a search there is no score to show, and importance orders the list as before.
    plain = curator_client.get(reverse(CHANGELIST)).content.decode()
    assert 'class="column-match"' not in plain and "sorted descending" in plain


def test_the_whole_title_is_in_the_list(make_memory: MemoryFactory, curator_client: Client) -> None:
    long_title = "Refunds above 500 EUR need a second approval from finance, except for enterprise contracts"
    make_memory(title=long_title, current_content="Refund rule.")

    page = curator_client.get(reverse(CHANGELIST)).content.decode()

    assert f'<span class="memory-title" title="{long_title}">{long_title}</span>' in page
