"""Every read shows who wrote a memory and how far curators stand behind it."""

from __future__ import annotations

import json

import pytest

from memories.decisions import memory_lock
from memories.services import memory_create, memory_update
from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.rest_api.conftest import API, client_with

pytestmark = pytest.mark.django_db

FACT = {"scope_type": "organization", "memory_type": "fact", "current_content": "Invoices are sent on the 1st."}


def test_mcp_reads_name_the_author_and_the_review(acme: Tenant, agent: McpClient) -> None:
    written = agent.ok("memory-write", {**FACT, "status": "active"})
    memory_lock(principal=acme.curator, memory_id=written["id"], reason="finance confirmed")

    got = agent.ok("memory-get", {"id": written["id"]})
    found = agent.ok("memory-search", {"query": "when are invoices sent", "limit": 1})[0]
    listed = agent.ok("memory-list", {"limit": 5})
    index = json.loads(agent.read_resource("memory://index"))[0]

    assert written["author"] == {"kind": "agent", "name": "acme-agent"}
    assert written["review"] == {"state": "unreviewed", "by": None, "at": None, "flags": []}
    for shown in (got, found, index, *listed["memories"]):
        assert shown["author"] == {"kind": "agent", "name": "acme-agent"}
        assert (shown["review"]["state"], shown["review"]["by"]) == ("locked", "acme-curator")
        assert shown["review"]["at"]


def test_the_author_is_who_wrote_the_text_as_it_reads_now(acme: Tenant) -> None:
    memory, _ = memory_create(principal=acme.agent, data=FACT)
    memory_update(principal=acme.person, memory_id=memory.pk, data={"importance": 3})
    assert memory.__class__.objects.get(pk=memory.pk).author_name == "acme-agent"  # not the text: not the author

    rewritten = memory_update(principal=acme.person, memory_id=memory.pk, data={"current_content": "On the 2nd."})

    assert (rewritten.author_kind, rewritten.author_name) == ("agent", "acme-person (for acme-person)")


def test_rest_and_the_operator_are_named_too(acme: Tenant) -> None:
    from organizations.principal import Principal

    operator = Principal.for_operator(acme.organization, "manage.py")
    memory, _ = memory_create(principal=operator, data={**FACT, "status": "verified"})

    data = client_with(acme.raw_tokens["reader"]).get(f"{API}/memories/{memory.pk}/").json()

    assert data["author"] == {"kind": "system", "name": "manage.py"}
    assert data["review"]["state"] == "verified" and data["review"]["by"] == "manage.py"
    assert data["review"]["at"].endswith("Z")
