"""The Entity admin page shows the fact timeline to acme's curator; globex's curator gets nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from knowledge.models import Entity, EntityAlias
from knowledge.selectors import entity_find
from knowledge.services import entity_resolve, triple_assert, triple_invalidate
from organizations.models import Role
from tests.admin.conftest import form_data
from tests.conftest import Tenant
from tests.knowledge.conftest import at

ClientAs = Callable[..., Client]


@pytest.fixture
def alice(acme: Tenant) -> Entity:
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Payments", valid_from=at(1))
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Search", valid_from=at(6))
    fact, _ = triple_assert(
        principal=acme.agent, subject="Alice", predicate="reports_to", object="Carol", valid_from=at(2)
    )
    triple_invalidate(principal=acme.agent, triple_id=fact.pk, reason="Carol left the company")
    entity = entity_find(acme.reader, "Alice")
    assert entity is not None
    return entity


def _timeline(response: Any) -> list[tuple[str, str, bool]]:
    formsets = [f for f in response.context["inline_admin_formsets"] if f.opts.verbose_name_plural.startswith("fact")]
    assert len(formsets) == 1
    facts = [form.original for form in formsets[0] if form.original is not None]
    return [(fact.predicate, fact.object.name, fact.expired_at is not None) for fact in facts]


def test_a_curator_sees_the_fact_timeline(acme: Tenant, alice: Entity, client_as: ClientAs) -> None:
    client = client_as("carol", acme.organization, Role.CURATOR)

    response = client.get(reverse("admin:knowledge_entity_change", args=[alice.pk]))

    assert response.status_code == 200
    page = response.content.decode()
    assert "fact timeline (as subject)" in page.lower()
    assert "Carol left the company" in page
    assert _timeline(response) == [
        ("reports_to", "Carol", True),
        ("reports_to", "Carol", False),
        ("works_on", "Payments", True),
        ("works_on", "Payments", False),
        ("works_on", "Search", False),
    ]


def test_the_timeline_is_read_only(acme: Tenant, alice: Entity, client_as: ClientAs) -> None:
    client = client_as("carol", acme.organization, Role.CURATOR)

    response = client.get(reverse("admin:knowledge_entity_change", args=[alice.pk]))

    formset = next(
        f for f in response.context["inline_admin_formsets"] if f.opts.verbose_name_plural.startswith("fact")
    )
    assert formset.has_add_permission is False
    assert formset.has_change_permission is False
    assert formset.has_delete_permission is False


def test_a_curator_adds_an_alias_that_resolves(acme: Tenant, alice: Entity, client_as: ClientAs) -> None:
    client = client_as("carol", acme.organization, Role.CURATOR)
    url = reverse("admin:knowledge_entity_change", args=[alice.pk])
    data = form_data(client.get(url), "entity_form")
    data.update({"aliases-TOTAL_FORMS": "2", "aliases-1-alias": "  Al ", "aliases-1-entity": str(alice.pk)})

    response = client.post(url, data)

    assert response.status_code == 302, response.content.decode()[:2000]
    assert entity_find(acme.reader, "AL") == alice


def test_an_alias_of_another_entity_is_refused_on_the_form(acme: Tenant, alice: Entity, client_as: ClientAs) -> None:
    entity_resolve(principal=acme.agent, name="Albert")
    client = client_as("carol", acme.organization, Role.CURATOR)
    url = reverse("admin:knowledge_entity_change", args=[alice.pk])
    data = form_data(client.get(url), "entity_form")
    data.update({"aliases-TOTAL_FORMS": "2", "aliases-1-alias": "albert", "aliases-1-entity": str(alice.pk)})

    response = client.post(url, data)

    assert response.status_code == 200
    assert "Albert" in response.content.decode()
    assert "already names" in response.content.decode()
    assert entity_find(acme.reader, "albert") == Entity.objects.get(name="Albert")
    assert EntityAlias.objects.filter(entity=alice).count() == 1


def test_a_globex_curator_gets_no_access(acme: Tenant, globex: Tenant, alice: Entity, client_as: ClientAs) -> None:
    client = client_as("gus", globex.organization, Role.CURATOR)

    change = client.get(reverse("admin:knowledge_entity_change", args=[alice.pk]), follow=True)
    entities = client.get(reverse("admin:knowledge_entity_changelist"))
    facts = client.get(reverse("admin:knowledge_triple_changelist"))

    assert change.redirect_chain and change.redirect_chain[0][1] == 302
    assert "Alice" not in change.content.decode()
    assert entities.status_code == facts.status_code == 200
    assert list(entities.context["cl"].result_list) == []
    assert list(facts.context["cl"].result_list) == []
    assert "Payments" not in entities.content.decode() + facts.content.decode()


def test_the_same_alias_twice_in_one_save_is_refused(acme: Tenant, alice: Entity, client_as: ClientAs) -> None:
    client = client_as("carol", acme.organization, Role.CURATOR)
    url = reverse("admin:knowledge_entity_change", args=[alice.pk])
    data = form_data(client.get(url), "entity_form")
    data.update(
        {
            "aliases-TOTAL_FORMS": "3",
            "aliases-1-alias": "Al",
            "aliases-1-entity": str(alice.pk),
            "aliases-2-alias": " AL",
            "aliases-2-entity": str(alice.pk),
        }
    )

    response = client.post(url, data)

    assert response.status_code == 200
    assert "given twice" in response.content.decode()
    assert EntityAlias.objects.filter(entity=alice).count() == 1


def test_an_entity_added_by_a_curator_is_found_by_its_name(acme: Tenant, client_as: ClientAs) -> None:
    client = client_as("carol", acme.organization, Role.CURATOR)
    url = reverse("admin:knowledge_entity_add")
    data = form_data(client.get(url), "entity_form")
    data.update({"organization": str(acme.organization.pk), "name": "Dana  Scully", "entity_type": "person"})

    response = client.post(url, data)

    assert response.status_code == 302, response.content.decode()[:3000]
    dana = Entity.objects.get(name__startswith="Dana")
    assert entity_find(acme.reader, "dana scully") == dana
    assert entity_resolve(principal=acme.agent, name="Dana Scully") == dana


def test_an_entity_named_like_another_ones_alias_is_refused(acme: Tenant, alice: Entity, client_as: ClientAs) -> None:
    client = client_as("carol", acme.organization, Role.CURATOR)
    url = reverse("admin:knowledge_entity_add")
    data = form_data(client.get(url), "entity_form")
    data.update({"organization": str(acme.organization.pk), "name": " ALICE"})

    response = client.post(url, data)

    assert response.status_code == 200
    assert "already names another entity (&#x27;Alice&#x27;)" in response.content.decode()
    assert Entity.objects.filter(name__iexact="alice").count() == 1


def test_a_renamed_entity_is_found_by_both_names(acme: Tenant, alice: Entity, client_as: ClientAs) -> None:
    client = client_as("carol", acme.organization, Role.CURATOR)
    url = reverse("admin:knowledge_entity_change", args=[alice.pk])
    data = form_data(client.get(url), "entity_form")
    data["name"] = "Alice Smith"

    response = client.post(url, data)

    assert response.status_code == 302
    assert entity_find(acme.reader, "alice smith") == alice
    assert entity_find(acme.reader, "alice") == alice


def test_the_page_lists_the_memories_that_mention_it_that_the_curator_may_read(
    acme: Tenant, alice: Entity, client_as: ClientAs, make_memory: Any
) -> None:
    shared = make_memory(current_content="Alice approves every schema change.", importance=5)
    make_memory(current_content="Ask Alice before touching the ledger.", importance=2)
    make_memory(acme.person, scope_type="user", current_content="Remind Alice about my salary review.")
    make_memory(current_content="Bob owns the search cluster.")
    client = client_as("carol", acme.organization, Role.CURATOR)

    response = client.get(reverse("admin:knowledge_entity_change", args=[alice.pk]))

    assert response.context["mentioning_total"] == 2
    assert response.context["mentioning"][0].pk == shared.pk
    page = response.content.decode()
    assert "Memories that mention it (2)" in page
    assert "Alice approves every schema change" in page and "salary review" not in page
