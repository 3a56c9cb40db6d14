"""Among memories that answer a question comparably, locked before verified before unreviewed: over
MCP, REST, recall and the admin search. Deprecated and superseded memories stay out of default reads."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from memories.decisions import memory_deprecate, memory_invalidate
from memories.models import Memory
from memories.recall import memory_recall
from memories.services import memory_create
from organizations.models import Membership, Role, User
from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.rest_api.conftest import API, client_with

# Over the live server: the MCP client speaks to the real web server, as agents do.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.mcp_live]

CURATED = "No deploys to production on Fridays after 14:00 UTC."
CLAIMED = "No deploys to production on Fridays after 16:00 UTC."
QUESTION = "can I ship on friday afternoon?"


def _write(principal: Any, text: str, **fields: Any) -> Memory:
    data = {"scope_type": "organization", "memory_type": "business_rule", "current_content": text, **fields}
    return memory_create(principal=principal, data=data)[0]


@pytest.fixture
def friday(acme: Tenant) -> dict[str, Memory]:
    # The agent's claim first, so that recency cannot be what puts the curated rule ahead.
    claimed = _write(acme.curator, CLAIMED, status="active")
    locked = _write(acme.curator, CURATED, status="locked")
    old = _write(acme.curator, "No deploys to production on Fridays after 12:00 UTC.", status="verified")
    memory_invalidate(principal=acme.curator, memory_id=old.pk, reason="moved to 14:00", superseded_by=locked.pk)
    return {"claimed": claimed, "locked": locked, "superseded": old}


def test_mcp_and_rest_search_put_the_curated_rule_first(acme: Tenant, agent: McpClient, friday: Any) -> None:
    over_mcp = agent.ok("memory-search", {"query": QUESTION, "limit": 5})
    over_rest = client_with(acme.raw_tokens["agent"]).post(f"{API}/memories/search/", {"query": QUESTION}).json()

    for results in (over_mcp, over_rest["results"]):
        ids = [hit["id"] for hit in results]
        assert ids[:2] == [str(friday["locked"].pk), str(friday["claimed"].pk)]
        assert str(friday["superseded"].pk) not in ids  # deprecated and superseded: asked for by status only
        assert results[0]["review"]["state"] == "locked" and results[1]["review"]["state"] == "unreviewed"
    # The score says how likely each answers; only the order weighs who stands behind it.
    assert over_mcp[0]["score"] > 0 and over_mcp[1]["score"] > 0


def test_recall_puts_the_curated_rule_in_the_rules_and_the_claim_below_it(acme: Tenant, friday: Any) -> None:
    bundle = memory_recall(acme.agent, phases=["work"], query=QUESTION, budget_tokens=4000)

    rules, relevant = bundle.split("## Relevant to:", 1)
    assert str(friday["locked"].pk) in rules and "locked by acme-curator" in rules
    assert str(friday["claimed"].pk) not in rules
    assert str(friday["claimed"].pk) in relevant and "unreviewed, written by acme-curator" in relevant
    assert str(friday["superseded"].pk) not in bundle


def test_the_admin_search_puts_the_curated_rule_first_and_hides_the_superseded(
    acme: Tenant, friday: Any, client: Client
) -> None:
    curator = User.objects.create_user(username="cora", password="unused-password-1", is_staff=True)
    Membership.objects.create(user=curator, organization=acme.organization, role=Role.CURATOR)
    client.force_login(curator)
    changelist = reverse("admin:memories_memory_changelist")

    found = client.get(changelist, {"q": QUESTION}).context["cl"].result_list
    retired = client.get(changelist, {"q": QUESTION, "shown": "retired"}).context["cl"].result_list

    assert [m.pk for m in found][:2] == [friday["locked"].pk, friday["claimed"].pk]
    assert friday["superseded"].pk not in [m.pk for m in found]
    assert [m.pk for m in retired] == [friday["superseded"].pk]


def test_deprecated_memories_leave_the_index_and_default_lists(acme: Tenant, agent: McpClient, friday: Any) -> None:
    memory_deprecate(principal=acme.curator, memory_id=friday["claimed"].pk, reason="wrong")

    index = {entry["id"] for entry in json.loads(agent.read_resource("memory://index"))}
    listed = {m["id"] for m in agent.ok("memory-list", {"limit": 50})["memories"]}
    retired = {"status": ["deprecated"], "include_expired": True}  # an invalidated memory's validity ended too
    asked = {m["id"] for m in agent.ok("memory-list", {"filters": retired, "limit": 50})["memories"]}

    assert index == listed == {str(friday["locked"].pk)}
    assert asked == {str(friday["claimed"].pk), str(friday["superseded"].pk)}
