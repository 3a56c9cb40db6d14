"""Audit events read as sentences: who by name, what, which object by its title, from and to, why."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.test import Client
from django.urls import reverse

from memories.services import memory_lock, memory_update, memory_verify
from organizations.models import Role, User
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
    assert any(actor.startswith("token") for actor in actors) and not any("globex" in a for a in actors)
    assert "Globex secret" not in page.content.decode()

    assert acme.curator.token is not None
    by_curator = client.get(reverse(CHANGELIST), {"actor": acme.curator.label})
    assert {event.actor for event in by_curator.context["cl"].result_list} == {acme.curator.label}
    assert by_curator.context["cl"].result_count == 30
