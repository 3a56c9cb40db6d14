"""Every form of the curators' workspace needs the CSRF token: a page of another site cannot make a
logged-in curator decide anything."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from memories.models import Memory
from organizations.models import ApiToken, Membership, Role
from tests.admin.conftest import StaffFactory
from tests.conftest import MemoryFactory, Tenant


@pytest.fixture
def forged(acme: Tenant, make_staff: StaffFactory) -> Client:
    """A logged-in organization admin's browser, posting from a page that has no CSRF token."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_staff("ada", acme.organization, Role.ADMIN))
    return client


def test_no_decision_is_taken_without_the_csrf_token(
    acme: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, forged: Client
) -> None:
    memory = make_memory(title="Ruff is the linter")
    token = ApiToken.objects.get(organization=acme.organization, name="acme-agent")
    member = Membership.objects.get(user=make_staff("leo", acme.organization, Role.READER))
    reason = {"reason": "forged", "post": "yes"}
    posts = {
        reverse("admin:review_decide"): {"memory": str(memory.pk), "decision": "verify", "reason": "forged"},
        reverse("admin:memories_memory_decide", args=[memory.pk, "lock"]): reason,
        reverse("admin:memories_memory_revert", args=[memory.pk, 1]): reason,
        reverse("admin:memories_memory_change", args=[memory.pk]): {"title": "Forged", **reason},
        reverse("admin:memories_memory_changelist"): {
            "action": "deprecate_selected", "_selected_action": [str(memory.pk)], **reason,
        },
        reverse("admin:organizations_apitoken_changelist"): {
            "action": "revoke", "_selected_action": [str(token.pk)], **reason,
        },
        reverse("admin:organizations_membership_changelist"): {
            "action": "remove_members", "_selected_action": [str(member.pk)], **reason,
        },
    }  # fmt: skip

    for url, data in posts.items():
        assert forged.post(url, data).status_code == 403, url

    memory.refresh_from_db()
    assert (memory.status, memory.title, memory.version) == ("draft", "Ruff is the linter", 1)
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None
    assert Membership.objects.filter(pk=member.pk).exists()
    assert Memory.objects.count() == 1
