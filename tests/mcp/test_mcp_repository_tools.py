"""repository-list and repository-create: an agent makes the repository its memories and code need."""

from __future__ import annotations

import pytest

from organizations.models import AuditEvent, Repository
from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.mcp.conftest import Connect

pytestmark = pytest.mark.django_db


def test_an_agent_creates_a_repository_then_indexes_and_scopes_to_it(acme: Tenant, agent: McpClient) -> None:
    created = agent.ok("repository-create", {"slug": "payments-api", "name": "Payments API"})
    again = agent.ok("repository-create", {"slug": "payments-api"})
    memory = agent.ok(
        "memory-write",
        {"scope_type": "repository", "repository": "payments-api", "memory_type": "fact",
         "current_content": "Amounts are integer cents."},
    )  # fmt: skip

    assert (created["slug"], created["name"], created["created"]) == ("payments-api", "Payments API", True)
    assert created["created_at"].endswith("Z")
    assert (again["created"], again["name"]) == (False, "Payments API")
    assert memory["repository"] == "payments-api"
    assert [r["slug"] for r in agent.ok("repository-list", {})] == ["payments-api"]
    event = AuditEvent.objects.get(action="repository.create")
    assert event.actor.startswith("token") and event.data == {"slug": "payments-api"}


def test_bad_slugs_readers_and_outsiders(acme: Tenant, globex: Tenant, connect: Connect, agent: McpClient) -> None:
    agent.ok("repository-create", {"slug": "web"})

    assert "not a valid repository slug" in agent.error("repository-create", {"slug": "Not A Slug"})
    assert "at most 200 characters" in agent.error("repository-create", {"slug": "x", "name": "n" * 201})
    reader = connect(acme.raw_tokens["reader"])
    assert "needs the agent role" in reader.error("repository-create", {"slug": "reports"})
    assert [r["slug"] for r in reader.ok("repository-list", {})] == ["web"]
    outsider = connect(globex.raw_tokens["admin"])
    assert outsider.ok("repository-list", {}) == []
    assert Repository.objects.filter(organization=globex.organization).count() == 0
