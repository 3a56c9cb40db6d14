"""Saving the change form goes through memory_update: a new version, the change recorded, and
the services' refusals shown as form errors."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from memories.decisions import memory_lock
from memories.models import Memory, MemoryVersion
from memories.services import memory_create, memory_update
from organizations.models import Repository, Role, User
from tests.admin.conftest import StaffFactory, form_data
from tests.conftest import MemoryFactory, Tenant

Login = Callable[[User], Client]


@pytest.fixture
def curator_client(acme: Tenant, make_staff: StaffFactory, login: Login) -> Client:
    return login(make_staff("carol", acme.organization, Role.CURATOR))


def _change_url(memory: Memory) -> str:
    return reverse("admin:memories_memory_change", args=[memory.pk])


def _form(client: Client, memory: Memory, reason: str = "Corrected after the review") -> dict[str, object]:
    response = client.get(_change_url(memory))
    assert response.status_code == 200
    return {**form_data(response, "memory_form"), "reason": reason}


def test_editing_the_content_writes_a_new_version(make_memory: MemoryFactory, curator_client: Client) -> None:
    memory = make_memory(title="Deploy rule", current_content="Deploys need one approval.", tags=["deploy"])
    data = _form(curator_client, memory)
    data["current_content"] = "Deploys need two approvals."

    response = curator_client.post(_change_url(memory), data)

    assert response.status_code == 302
    assert response["Location"] == reverse("admin:memories_memory_changelist")
    memory.refresh_from_db()
    assert memory.current_content == "Deploys need two approvals."
    assert memory.title == "Deploy rule"
    assert memory.tags == ["deploy"]
    assert memory.version == 2
    assert memory.updated_by is not None and memory.updated_by.username == "carol"
    version = MemoryVersion.objects.get(memory=memory, version=2)
    assert version.change == "update"
    assert version.changed_fields == ["current_content"]
    assert version.actor == "user carol"
    assert version.reason == "Corrected after the review"
    assert version.snapshot["current_content"] == "Deploys need two approvals."


def test_the_admin_history_names_the_memory_by_its_new_title(
    make_memory: MemoryFactory, curator_client: Client
) -> None:
    memory = make_memory(title="Old title")
    data = _form(curator_client, memory)
    data["title"] = "New title"

    response = curator_client.post(_change_url(memory), data, follow=True)

    assert [str(m) for m in response.context["messages"]] == [
        f'The memory “<a href="{_change_url(memory)}">New title</a>” was changed successfully.'
    ]
    history = curator_client.get(reverse("admin:memories_memory_history", args=[memory.pk]))
    assert history.status_code == 200
    assert history.context["title"] == "History of “New title”"
    assert [(v.version, v.change, v.snapshot["title"]) for v in history.context["versions"]] == [
        (2, "update", "New title"),
        (1, "create", "Old title"),
    ]


def test_saving_without_changes_writes_no_version(make_memory: MemoryFactory, curator_client: Client) -> None:
    memory = make_memory(tags=["deploy", "ci"], metadata={"team": "platform"})

    response = curator_client.post(_change_url(memory), _form(curator_client, memory))

    assert response.status_code == 302
    memory.refresh_from_db()
    assert memory.version == 1
    assert MemoryVersion.objects.filter(memory=memory).count() == 1


def test_several_fields_change_in_one_version(make_memory: MemoryFactory, curator_client: Client) -> None:
    memory = make_memory()
    data = _form(curator_client, memory)
    data.update(title="Pipeline fact", importance="8", tags="deploy,ci")

    curator_client.post(_change_url(memory), data)

    memory.refresh_from_db()
    assert (memory.title, memory.importance, memory.tags, memory.version) == ("Pipeline fact", 8, ["deploy", "ci"], 2)
    assert MemoryVersion.objects.get(memory=memory, version=2).changed_fields == ["importance", "tags", "title"]


def test_a_curator_may_edit_a_locked_memory(acme: Tenant, make_memory: MemoryFactory, curator_client: Client) -> None:
    memory = make_memory(current_content="Deploys need one approval.")
    memory_lock(principal=acme.curator, memory_id=memory.pk)
    data = _form(curator_client, memory)
    data["current_content"] = "Deploys need two approvals."

    assert curator_client.post(_change_url(memory), data).status_code == 302

    memory.refresh_from_db()
    assert memory.current_content == "Deploys need two approvals."
    assert memory.status == "locked"
    assert memory.version == 3


def test_a_refused_change_shows_the_services_message_and_saves_nothing(
    make_memory: MemoryFactory, curator_client: Client
) -> None:
    memory = make_memory()
    data = _form(curator_client, memory)
    data.update(scope_type="repository", repository="")

    response = curator_client.post(_change_url(memory), data)

    assert response.status_code == 200
    assert response.context["adminform"].form.non_field_errors() == [
        "scope_type 'repository' needs a repository slug in 'repository'"
    ]
    memory.refresh_from_db()
    assert (memory.scope_type, memory.version) == ("organization", 1)


def test_a_curator_may_make_a_memory_personal(acme: Tenant, make_memory: MemoryFactory, curator_client: Client) -> None:
    memory = make_memory()
    data = _form(curator_client, memory)
    data["scope_type"] = "user"

    response = curator_client.post(_change_url(memory), data)

    # The service sets the owner; the form must not judge the half-built row and show an error
    # for a change it has already saved.
    assert response.status_code == 302
    memory.refresh_from_db()
    assert memory.scope_type == "user"
    assert memory.owner is not None and memory.owner.username == "carol"
    assert memory.version == 2


def test_moving_a_memory_into_a_repository(acme: Tenant, make_memory: MemoryFactory, curator_client: Client) -> None:
    repository = Repository.objects.create(organization=acme.organization, slug="billing")
    memory = make_memory()
    data = _form(curator_client, memory)
    data.update(scope_type="repository", repository=str(repository.pk))

    assert curator_client.post(_change_url(memory), data).status_code == 302

    memory.refresh_from_db()
    assert (memory.scope_type, memory.repository) == ("repository", repository)


def test_another_tenants_repository_cannot_be_chosen(
    acme: Tenant, globex: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    theirs = Repository.objects.create(organization=globex.organization, slug="globex-secret-project")
    memory = make_memory()
    data = _form(curator_client, memory)
    data.update(scope_type="repository", repository=str(theirs.pk))

    response = curator_client.post(_change_url(memory), data)

    assert response.status_code == 200
    assert "repository" in response.context["adminform"].form.errors
    memory.refresh_from_db()
    assert memory.scope_type == "organization"
    assert not Repository.objects.filter(organization=acme.organization, slug="globex-secret-project").exists()


def test_the_change_page_shows_the_version_history(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    memory = make_memory(current_content="Deploys need one approval.")
    memory_update(principal=acme.curator, memory_id=memory.pk, data={"importance": 5}, reason="raised after the outage")

    response = curator_client.get(_change_url(memory))

    inlines = response.context["inline_admin_formsets"]
    versions = [inline for inline in inlines if inline.formset.model is MemoryVersion]
    assert len(versions) == 1
    shown = [form.original for form in versions[0]]
    assert [(v.version, v.change) for v in shown] == [(2, "update"), (1, "create")]
    assert "raised after the outage" in response.content.decode()


def test_a_superuser_edits_any_organizations_memory(globex: Tenant, login: Login) -> None:
    memory, _ = memory_create(
        principal=globex.agent,
        data={"scope_type": "organization", "memory_type": "fact", "current_content": "Globex ships on Fridays."},
    )
    client = login(User.objects.create_superuser(username="root", password="unused-password-1"))
    data = _form(client, memory)
    data["current_content"] = "Globex ships on Thursdays."

    response = client.post(_change_url(memory), data)

    assert response.status_code == 302
    memory.refresh_from_db()
    assert (memory.current_content, memory.version) == ("Globex ships on Thursdays.", 2)
    assert MemoryVersion.objects.get(memory=memory, version=2).actor == "user root"


def test_the_change_page_shows_links_both_ways(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    from knowledge.links import link_create
    from knowledge.models import MemoryLink

    rule = make_memory(current_content="Deploys need one approval.")
    parent = make_memory(current_content="Every change is reviewed.")
    child = make_memory(current_content="Hotfixes also need the approval.")
    link_create(principal=acme.agent, source_id=rule.pk, target_id=parent.pk, relation_type="depends_on")
    link_create(principal=acme.agent, source_id=child.pk, target_id=rule.pk, relation_type="derived_from")

    response = curator_client.get(_change_url(rule))

    links = [inline for inline in response.context["inline_admin_formsets"] if inline.formset.model is MemoryLink]
    shown = {
        (form.original.source_id, form.original.relation_type, form.original.target_id) for i in links for form in i
    }
    assert shown == {(rule.pk, "depends_on", parent.pk), (child.pk, "derived_from", rule.pk)}


def test_the_change_page_shows_facts_learned_from_the_memory(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    from knowledge.models import Triple
    from knowledge.services import triple_assert

    memory = make_memory(current_content="Alice moved to the Search team in June.")
    other = make_memory(current_content="Bob leads Payments.")
    triple_assert(principal=acme.agent, subject="Alice", predicate="works_on", object="Search", memory_id=memory.pk)
    triple_assert(principal=acme.agent, subject="Bob", predicate="leads", object="Payments", memory_id=other.pk)

    response = curator_client.get(_change_url(memory))

    facts = [inline for inline in response.context["inline_admin_formsets"] if inline.formset.model is Triple]
    shown = [
        (form.original.subject.name, form.original.predicate, form.original.object.name) for i in facts for form in i
    ]
    assert shown == [("Alice", "works_on", "Search")]


def test_the_change_page_shows_the_names_the_memory_mentions(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    from knowledge.models import Mention
    from knowledge.services import entity_add_alias, entity_resolve

    entity_resolve(principal=acme.agent, name="Kubernetes")
    entity_add_alias(principal=acme.agent, entity_name="Kubernetes", alias="k8s")
    memory = make_memory(current_content="Alice runs the k8s upgrade with the Platform Team.")

    response = curator_client.get(_change_url(memory))

    [mentions] = [i for i in response.context["inline_admin_formsets"] if i.formset.model is Mention]
    assert [(form.original.written, form.original.kind) for form in mentions] == [
        ("Alice", "name"),
        ("k8s", "alias"),
        ("Platform Team", "name"),
    ]
    page = response.content.decode()
    assert "Names it mentions" in page and "Kubernetes" in page


def test_a_change_without_a_reason_is_refused_and_saves_nothing(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    memory = make_memory(current_content="Deploys need one approval.")
    data = _form(curator_client, memory, reason="  ")
    data["current_content"] = "Deploys need two approvals."

    response = curator_client.post(_change_url(memory), data)

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["reason"] == [
        "Say why you change it: the reason is kept in its history and the audit log."
    ]
    memory.refresh_from_db()
    assert (memory.current_content, memory.version) == ("Deploys need one approval.", 1)


def test_the_status_is_changed_by_the_decision_buttons_not_the_form(
    make_memory: MemoryFactory, curator_client: Client
) -> None:
    memory = make_memory(status="active")
    data = _form(curator_client, memory)
    assert "status" not in data  # shown, not editable
    data["status"] = "locked"
    data["importance"] = 7

    assert curator_client.post(_change_url(memory), data).status_code == 302

    memory.refresh_from_db()
    assert (memory.status, memory.importance) == ("active", 7)


def test_an_edit_opened_from_the_review_queue_goes_back_to_it(
    make_memory: MemoryFactory, curator_client: Client
) -> None:
    memory = make_memory()
    queue = reverse("admin:review_queue") + "?page=1"
    page = curator_client.get(_change_url(memory), {"next": queue})
    assert f'<input type="hidden" name="next" value="{queue}">'.replace("&", "&amp;") in page.content.decode()
    data = {**form_data(page, "memory_form"), "reason": "Tightened the wording", "title": "Reworded"}

    response = curator_client.post(_change_url(memory), data)

    assert (response.status_code, response["Location"]) == (302, queue)
    # Only addresses of this site are followed.
    data["next"] = "https://evil.example/"
    response = curator_client.post(_change_url(memory), {**data, "title": "Reworded again"})
    assert response["Location"] == reverse("admin:memories_memory_changelist")


@pytest.mark.parametrize(
    ("metadata", "said"),
    [("[" * 5000 + "]" * 5000, "nested more than 32 levels"), ('{"team": "\\ud800"}', "not valid Unicode")],
    ids=["deep", "lone-surrogate"],
)
def test_metadata_the_platform_cannot_read_is_a_form_error(
    make_memory: MemoryFactory, curator_client: Client, metadata: str, said: str
) -> None:
    memory = make_memory()
    data = {**_form(curator_client, memory), "metadata": metadata}

    response = curator_client.post(_change_url(memory), data)

    assert response.status_code == 200
    assert said in response.context["adminform"].form.errors["metadata"][0]
    memory.refresh_from_db()
    assert memory.version == 1
