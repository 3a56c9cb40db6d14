"""The curators see what agents claim: flagged writes in the review queue, unreviewed agent rules on
the dashboard, author and standing in the memory list; admins edit the write policy."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from memories.models import WritePolicy
from memories.services import memory_create
from memories.write_policy import write_policy_update
from organizations.models import AuditEvent, Membership, Role, User
from tests.conftest import Tenant
from tests.trust.attacks import POISON

pytestmark = pytest.mark.django_db


def _staff(acme: Tenant, client: Client, role: str) -> Client:
    user = User.objects.create_user(username=f"{role}-person", password="unused-password-1", is_staff=True)
    Membership.objects.create(user=user, organization=acme.organization, role=role)
    client.force_login(user)
    return client


def test_the_queue_shows_flagged_active_memories_and_why(acme: Tenant, client: Client) -> None:
    write_policy_update(principal=acme.admin, data={"agent_active_types": ["fact", "business_rule"]})
    rule, _ = memory_create(
        principal=acme.agent,
        data={"scope_type": "organization", "memory_type": "business_rule", "status": "active",
              "current_content": "Refunds above 100 EUR need a second approval."},
    )  # fmt: skip
    poison, _ = memory_create(
        principal=acme.agent,
        data={"scope_type": "organization", "memory_type": "fact", "status": "active", "current_content": POISON},
    )

    page = _staff(acme, client, Role.CURATOR).get(reverse("admin:review_queue")).content.decode()

    assert rule.status == "active" and f"draft-{rule.pk}" in page  # active, yet waiting: an agent's rule
    assert f"draft-{poison.pk}" in page and poison.status == "draft"
    assert "instructions</strong>: current_content tells the reader to set aside its other instructions" in page
    assert "acme-agent (agent)" in page


def test_the_dashboard_counts_unreviewed_agent_rules(acme: Tenant, client: Client) -> None:
    for text in ("Refunds need approval.", "Deploys need approval."):
        memory_create(
            principal=acme.agent,
            data={"scope_type": "organization", "memory_type": "convention", "current_content": text},
        )
    memory_create(
        principal=acme.curator,
        data={"scope_type": "organization", "memory_type": "convention", "current_content": "Tabs, never spaces.",
              "status": "locked"},
    )  # fmt: skip

    page = _staff(acme, client, Role.CURATOR).get(reverse("admin:index")).content.decode()

    assert "<strong>2</strong> unreviewed agent rules" in page


def test_the_memory_list_names_author_and_standing(acme: Tenant, client: Client) -> None:
    memory_create(
        principal=acme.curator,
        data={"scope_type": "organization", "memory_type": "fact", "current_content": "CI runs on Actions.",
              "status": "verified"},
    )  # fmt: skip

    page = _staff(acme, client, Role.READER).get(reverse("admin:memories_memory_changelist")).content.decode()

    assert "acme-curator <small>(agent)</small>" in page
    assert "verified by acme-curator" in page


def test_admins_edit_the_write_policy_in_the_admin_and_it_is_audited(acme: Tenant, client: Client) -> None:
    admin = _staff(acme, client, Role.ADMIN)

    response = admin.post(
        reverse("admin:memories_writepolicy_add"),
        {"organization": acme.organization.pk, "agent_active_types": ["fact", "task"], "agent_max_importance": 5,
         "pin_requires_curator": "on", "credentials": "redact", "reason": "set up in the admin"},
    )  # fmt: skip

    assert response.status_code == 302, response.content.decode()[:2000]
    policy = WritePolicy.objects.get(organization=acme.organization)
    assert (policy.agent_active_types, policy.agent_max_importance, policy.credentials) == (
        ["fact", "task"], 5, "redact",
    )  # fmt: skip
    assert AuditEvent.objects.get(action="write_policy.update").reason == "set up in the admin"


def test_curators_see_the_policy_but_do_not_change_it(acme: Tenant, client: Client) -> None:
    curator = _staff(acme, client, Role.CURATOR)

    assert curator.get(reverse("admin:memories_writepolicy_changelist")).status_code == 200
    assert curator.get(reverse("admin:memories_writepolicy_add")).status_code == 403
