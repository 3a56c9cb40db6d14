"""Audit events read as sentences: who by name, what, which object by its title, from and to, why."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from knowledge.links import link_create
from knowledge.services import triple_assert
from lifecycle.services import proposal_create, proposal_dismiss
from memories.decisions import memory_lock, memory_verify
from memories.services import memory_update
from organizations.models import Role, User
from organizations.services import membership_remove, repository_get_or_create
from organizations.tokens import token_revoke
from tests.admin.conftest import StaffFactory
from tests.conftest import MemoryFactory, Tenant

Login = Callable[[User], Client]
CHANGELIST = "admin:organizations_auditevent_changelist"


def test_events_name_people_objects_and_status_changes(
    acme: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, login: Login
) -> None:
    memory = make_memory(title="Ruff is the linter")
    memory_verify(principal=acme.curator, memory_id=memory.pk, reason="checked the config")
    memory_lock(principal=acme.curator, memory_id=memory.pk, reason="team standard")
    client = login(make_staff("carla", acme.organization, Role.CURATOR))

    page = client.get(reverse(CHANGELIST), {"action": "memory.status"}).content.decode()

    url = reverse("admin:memories_memory_change", args=[memory.pk])
    assert f'<a href="{url}">Ruff is the linter</a>' in page
    assert '<span class="chip chip-draft">draft</span> → <span class="chip chip-verified">verified</span>' in page
    assert '<span class="chip chip-verified">verified</span> → <span class="chip chip-locked">locked</span>' in page
    assert acme.curator.token is not None
    assert f"{acme.curator.token.name} ({acme.curator.token.display})" in page
    assert "team standard" in page


def test_filters_by_actor_and_one_page_is_a_few_queries(  # noqa: PLR0917 - fixtures
    acme: Tenant, globex: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, login: Login,
    django_assert_max_num_queries: Any,
) -> None:  # fmt: skip
    for n in range(30):
        memory = make_memory(title=f"Rule {n}")
        memory_update(principal=acme.curator, memory_id=memory.pk, data={"status": "verified"})
    make_memory(principal=globex.agent, title="Globex secret")
    client = login(make_staff("carla", acme.organization, Role.CURATOR))

    with django_assert_max_num_queries(25):
        page = client.get(reverse(CHANGELIST))
    actors = {
        choice["display"]
        for spec in page.context["cl"].filter_specs
        if spec.title == "actor"
        for choice in spec.choices(page.context["cl"])
    }
    # Agents by their token's name, people by theirs.
    assert f"acme-curator ({acme.curator.label.removeprefix('token ')})" in actors
    assert not any("globex" in a for a in actors)
    assert "Globex secret" not in page.content.decode()

    assert acme.curator.token is not None
    by_curator = client.get(reverse(CHANGELIST), {"actor": acme.curator.label})
    assert {event.actor for event in by_curator.context["cl"].result_list} == {acme.curator.label}
    assert by_curator.context["cl"].result_count == 30


def test_every_kind_of_object_is_named_and_linked(
    acme: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, login: Login
) -> None:
    first = make_memory(title="Deploys need approval", status="active")
    second = make_memory(title="Deploys need sign-off", status="active")
    link, _ = link_create(principal=acme.agent, source_id=first.pk, target_id=second.pk)
    fact, _ = triple_assert(principal=acme.agent, subject="billing", predicate="owned_by", object="ana")
    repository = repository_get_or_create(principal=acme.admin, slug="payments")
    proposal, _ = proposal_create(
        organization_id=acme.organization.pk, kind="merge", memory_ids=[first.pk, second.pk],
        created_by="consolidation", survivor_id=first.pk, evidence={"similarity": 0.97},
    )  # fmt: skip
    assert proposal is not None
    proposal_dismiss(principal=acme.curator, proposal_id=proposal.pk, reason="not the same")
    token_revoke(principal=acme.admin, prefix=acme.raw_tokens["reader"].split("_")[1], reason="unused")
    leaver = make_staff("leo", acme.organization, Role.READER)
    membership_remove(principal=acme.admin, user=leaver, reason="left")
    client = login(make_staff("ada", acme.organization, Role.ADMIN))

    page = client.get(reverse(CHANGELIST)).content.decode()

    expected = {
        "admin:knowledge_memorylink_change": (link.pk, "link: Deploys need approval → related → Deploys need sign-off"),
        "admin:knowledge_triple_change": (fact.pk, "fact: billing owned_by ana"),
        "admin:organizations_repository_change": (repository.pk, "repository payments"),
        "admin:lifecycle_consolidationproposal_change": (
            proposal.pk, "merge duplicates proposal: Deploys need approval / Deploys need sign-off",
        ),
    }  # fmt: skip
    for name, (pk, label) in expected.items():
        assert f'<a href="{reverse(name, args=[pk])}">{escape(label)}</a>' in page, label
    assert "token acme-reader (mp_" in page
    assert "membership leo (gone)" in page  # removed: named by the event, not linked
