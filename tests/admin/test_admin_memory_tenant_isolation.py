"""A staff person sees only the organizations they belong to; another tenant's memories are
invisible (not merely read-only), and nothing on the page names the other tenant."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from memories.models import Memory
from memories.services import memory_create
from organizations.models import ApiToken, AuditEvent, Membership, Role, User
from tests.admin.conftest import StaffFactory, messages_of
from tests.conftest import MemoryFactory, Tenant

Login = Callable[[User], Client]


@pytest.fixture
def acme_memory(make_memory: MemoryFactory) -> Memory:
    return make_memory(title="Acme deploys need two approvals")


@pytest.fixture
def globex_memory(globex: Tenant) -> Memory:
    return memory_create(
        principal=globex.agent,
        data={
            "scope_type": "repository",
            "repository": "globex-secret-project",
            "memory_type": "fact",
            "title": "Globex launches the doomsday device on Friday",
            "current_content": "Globex launches the doomsday device on Friday.",
        },
        create_repository=True,
    )[0]


def _listed(client: Client) -> set[str]:
    response = client.get(reverse("admin:memories_memory_changelist"))
    assert response.status_code == 200
    return {memory.title for memory in response.context["cl"].result_list}


def test_a_curator_lists_the_own_organizations_memories_only(
    acme: Tenant, acme_memory: Memory, globex_memory: Memory, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("carol", acme.organization, Role.CURATOR))

    assert _listed(client) == {acme_memory.title}


def test_nothing_on_a_curators_pages_names_the_other_organization(
    acme: Tenant, acme_memory: Memory, globex_memory: Memory, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("carol", acme.organization, Role.CURATOR))
    pages = [
        reverse("admin:index"),
        reverse("admin:memories_memory_changelist"),
        reverse("admin:memories_memory_change", args=[acme_memory.pk]),
        reverse("admin:memories_memory_add"),
        reverse("admin:organizations_organization_changelist"),
        reverse("admin:organizations_repository_changelist"),
        reverse("admin:organizations_auditevent_changelist"),
    ]

    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, page
        body = response.content.decode()
        # The organization filter and the repository choices once listed every tenant.
        assert "globex" not in body.lower(), page
        assert "doomsday" not in body, page


def test_another_tenants_curator_sees_none_of_acme(
    globex: Tenant,
    acme_memory: Memory,
    globex_memory: Memory,
    make_staff: StaffFactory,
    login: Login,
) -> None:
    client = login(make_staff("gary", globex.organization, Role.CURATOR))

    assert _listed(client) == {globex_memory.title}
    # Acme's memory is about approvals: neither search finds it, and globex's own, about something
    # else, is no match either (search leaves out what scores below its floor).
    for mode, found in (("words", []), ("meaning", [])):
        search = client.get(reverse("admin:memories_memory_changelist"), {"q": "approvals", "mode": mode})
        assert list(search.context["cl"].result_list) == found, mode


@pytest.mark.parametrize("view", ["admin:memories_memory_change", "admin:memories_memory_history"])
def test_another_tenants_memory_reads_as_missing(
    globex: Tenant, acme_memory: Memory, make_staff: StaffFactory, login: Login, view: str
) -> None:
    client = login(make_staff("gary", globex.organization, Role.CURATOR))

    response = client.get(reverse(view, args=[acme_memory.pk]))

    # Django's answer for an object that does not exist: back to the index with a message.
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:index")
    assert messages_of(client.get(response["Location"])) == [
        f"memory with ID “{acme_memory.pk}” doesn\u2019t exist. Perhaps it was deleted?"
    ]


def test_another_tenants_curator_cannot_post_a_change(
    acme: Tenant, globex: Tenant, acme_memory: Memory, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("gary", globex.organization, Role.CURATOR))

    response = client.post(
        reverse("admin:memories_memory_change", args=[acme_memory.pk]),
        {"scope_type": "organization", "memory_type": "fact", "title": "Hijacked", "current_content": "Hijacked"},
    )

    assert response.status_code == 302
    acme_memory.refresh_from_db()
    assert acme_memory.title == "Acme deploys need two approvals"
    assert acme_memory.version == 1


def test_another_tenants_curator_cannot_run_actions_on_acme(
    acme: Tenant, globex: Tenant, acme_memory: Memory, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("gary", globex.organization, Role.CURATOR))

    client.post(
        reverse("admin:memories_memory_changelist"),
        {"action": "delete_selected", "_selected_action": [str(acme_memory.pk)], "post": "yes", "reason": "gone"},
    )

    acme_memory.refresh_from_db()
    assert acme_memory.deleted_at is None


@pytest.mark.parametrize(
    "model",
    ["memories_memory", "organizations_organization", "organizations_repository", "organizations_auditevent"],
)
def test_staff_without_membership_is_refused_every_model(
    acme: Tenant, acme_memory: Memory, make_staff: StaffFactory, login: Login, model: str
) -> None:
    client = login(make_staff("sam"))

    assert client.get(reverse(f"admin:{model}_changelist")).status_code == 403


def test_staff_without_membership_sees_an_empty_index(
    acme: Tenant, acme_memory: Memory, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("sam"))

    response = client.get(reverse("admin:index"))

    assert response.status_code == 200
    assert response.context["app_list"] == []
    assert client.get(reverse("admin:memories_memory_change", args=[acme_memory.pk])).status_code == 403


def test_a_member_who_is_not_staff_cannot_enter_the_admin(acme: Tenant, login: Login) -> None:
    user = User.objects.create_user(username="nina", password="unused-password-1")
    Membership.objects.create(user=user, organization=acme.organization, role=Role.ADMIN)
    client = login(user)

    response = client.get(reverse("admin:memories_memory_changelist"))

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_the_organization_list_shows_only_the_own_organizations(
    acme: Tenant, globex: Tenant, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("carol", acme.organization, Role.READER))

    response = client.get(reverse("admin:organizations_organization_changelist"))

    assert [organization.slug for organization in response.context["cl"].result_list] == ["acme"]
    assert (
        client.get(reverse("admin:organizations_organization_change", args=[globex.organization.pk])).status_code == 302
    )


def test_a_superuser_sees_every_organizations_memories(
    acme: Tenant, acme_memory: Memory, globex_memory: Memory, login: Login
) -> None:
    client = login(User.objects.create_superuser(username="root", password="unused-password-1"))

    assert _listed(client) == {acme_memory.title, globex_memory.title}
    response = client.get(reverse("admin:memories_memory_change", args=[globex_memory.pk]))
    assert response.status_code == 200


def test_an_outsider_reaches_no_audit_event_or_token_page_of_acme(
    acme: Tenant, globex: Tenant, acme_memory: Memory, make_staff: StaffFactory, login: Login
) -> None:
    event = AuditEvent.objects.filter(organization=acme.organization).first()
    token = ApiToken.objects.filter(organization=acme.organization).first()
    assert event is not None and token is not None
    client = login(make_staff("gail", globex.organization, Role.ADMIN))

    for url in (
        reverse("admin:organizations_auditevent_change", args=[event.pk]),
        reverse("admin:organizations_apitoken_change", args=[token.pk]),
        reverse("admin:memories_memory_history", args=[acme_memory.pk]),
    ):
        response = client.get(url, follow=True)
        page = response.content.decode()
        assert "exist. Perhaps it was deleted?" in page, url  # Django's "does not exist" message
        assert acme_memory.title not in page and token.prefix not in page
