"""The write policy: what an agent may write without a curator's review, and saying so when it acts."""

from __future__ import annotations

from typing import Any

import pytest

from memories.decisions import memory_verify
from memories.models import Memory, WritePolicy
from memories.services import memory_create, memory_update
from memories.write_policy import write_policy_update
from memory_platform.exceptions import PermissionDenied, ValidationError
from organizations.models import AuditEvent
from tests.conftest import Tenant
from tests.rest_api.conftest import API, client_with, error_of

pytestmark = pytest.mark.django_db

RULE = {"scope_type": "organization", "memory_type": "business_rule", "current_content": "Refunds need approval."}


def _codes(memory: Memory) -> list[str]:
    return [note.code for note in memory.write_notes]


def test_an_agents_rule_waits_as_a_draft_and_says_why(acme: Tenant) -> None:
    memory, _ = memory_create(principal=acme.agent, data={**RULE, "status": "active"})

    assert memory.status == "draft"
    assert _codes(memory) == ["rule", "status"]
    assert "stored as a draft" in memory.write_notes[-1].message
    assert "business_rule waits for a curator" in memory.write_notes[-1].message
    assert [flag["code"] for flag in memory.review_flags] == ["rule"]


def test_a_type_the_policy_allows_stays_active_and_nothing_is_said(acme: Tenant) -> None:
    memory, _ = memory_create(
        principal=acme.agent, data={**RULE, "memory_type": "tech_stack", "status": "active", "importance": 7}
    )

    assert (memory.status, memory.importance, memory.write_notes, memory.review_flags) == ("active", 7, (), [])


def test_importance_above_the_ceiling_is_capped_and_the_asked_value_kept_for_a_curator(acme: Tenant) -> None:
    memory, _ = memory_create(principal=acme.agent, data={**RULE, "memory_type": "fact", "importance": 10})

    assert memory.importance == 7
    [note] = memory.write_notes
    assert note.code == "importance" and "importance 10 asked, 7 stored" in note.message
    assert memory.review_flags[0]["requested"] == 10


@pytest.mark.parametrize("pin", [{"tags": ["pinned"]}, {"metadata": {"pinned": True}}])
def test_a_pin_waits_for_a_curator(acme: Tenant, pin: dict[str, Any]) -> None:
    memory, _ = memory_create(principal=acme.agent, data={**RULE, "memory_type": "fact", "status": "active", **pin})

    assert memory.status == "draft"
    assert _codes(memory) == ["pin", "status"]
    verified = memory_verify(principal=acme.curator, memory_id=memory.pk, reason="yes, everyone needs it")
    assert (verified.status, verified.review_flags, verified.reviewed_by) == ("verified", [], "acme-curator")


def test_an_agent_cannot_activate_what_waits_for_a_curator(acme: Tenant) -> None:
    memory, _ = memory_create(principal=acme.agent, data={**RULE, "memory_type": "fact", "tags": ["pinned"]})

    again = memory_update(principal=acme.agent, memory_id=memory.pk, data={"status": "active"})

    assert again.status == "draft" and _codes(again) == ["status"]
    assert "flags a curator has not cleared" in again.write_notes[0].message


def test_adding_a_pin_or_raising_importance_later_is_held_the_same(acme: Tenant) -> None:
    memory, _ = memory_create(principal=acme.agent, data={**RULE, "memory_type": "fact", "status": "active"})

    pinned = memory_update(principal=acme.agent, memory_id=memory.pk, data={"tags": ["pinned"], "importance": 9})

    assert (pinned.status, pinned.importance, pinned.tags) == ("draft", 7, ["pinned"])
    assert {"pin", "importance", "status"} <= set(_codes(pinned))


def test_curators_write_as_they_mean(acme: Tenant) -> None:
    memory, _ = memory_create(
        principal=acme.curator, data={**RULE, "status": "verified", "importance": 10, "tags": ["pinned"]}
    )

    assert (memory.status, memory.importance, memory.write_notes, memory.review_flags) == ("verified", 10, (), [])
    assert (memory.reviewed_by, memory.author_kind, memory.author_name) == ("acme-curator", "agent", "acme-curator")


def test_the_policy_is_the_organizations_own(acme: Tenant, globex: Tenant) -> None:
    write_policy_update(
        principal=acme.admin,
        data={
            "agent_active_types": ["business_rule", "fact"],
            "agent_max_importance": 9,
            "pin_requires_curator": False,
        },
        reason="we trust our agents with rules",
    )

    ours, _ = memory_create(principal=acme.agent, data={**RULE, "status": "active", "importance": 9})
    theirs, _ = memory_create(principal=globex.agent, data={**RULE, "status": "active", "importance": 9})

    assert (ours.status, ours.importance) == ("active", 9)
    assert _codes(ours) == ["rule"]  # an active rule still reaches the review queue
    assert (theirs.status, theirs.importance) == ("draft", 7)


def test_changing_the_policy_needs_an_admin_and_is_audited(acme: Tenant) -> None:
    with pytest.raises(PermissionDenied, match="admin"):
        write_policy_update(principal=acme.curator, data={"agent_max_importance": 9})
    with pytest.raises(ValidationError, match="agent_max_importance"):
        write_policy_update(principal=acme.admin, data={"agent_max_importance": 11})

    write_policy_update(principal=acme.admin, data={"agent_max_importance": 5}, reason="too many 7s")

    event = AuditEvent.objects.get(action="write_policy.update")
    assert (event.reason, event.data) == (
        "too many 7s",
        {"before": {"agent_max_importance": 7}, "after": {"agent_max_importance": 5}},
    )
    assert WritePolicy.objects.get(organization=acme.organization).updated_by == "acme-admin"


def test_rest_reads_the_policy_for_everyone_and_changes_it_for_admins(acme: Tenant) -> None:
    reader = client_with(acme.raw_tokens["reader"])
    policy = reader.get(f"{API}/write-policy/").json()
    assert policy["agent_max_importance"] == 7 and policy["credentials"] == "refuse"
    assert "business_rule" not in policy["agent_active_types"] and "fact" in policy["agent_active_types"]
    assert policy["pin_requires_curator"] is True

    error_of(reader.patch(f"{API}/write-policy/", {"agent_max_importance": 9}, format="json"), 403)
    error_of(client_with(acme.raw_tokens["admin"]).patch(f"{API}/write-policy/", {"colour": "red"}, format="json"), 400)
    changed = client_with(acme.raw_tokens["admin"]).patch(
        f"{API}/write-policy/", {"agent_active_types": ["fact"], "reason": "rules need review"}, format="json"
    )

    assert changed.status_code == 200 and changed.json()["agent_active_types"] == ["fact"]
    assert changed.json()["updated_by"] == "acme-admin"
