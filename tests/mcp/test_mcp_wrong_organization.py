from __future__ import annotations

import pytest

from tests.conftest import Tenant
from tests.mcp.client import McpClient

pytestmark = pytest.mark.django_db


def test_writing_to_another_organization_is_not_found(agent: McpClient, globex: Tenant) -> None:
    for organization in ("globex", "initech"):
        message = agent.error(
            "memory-write",
            {
                "organization": organization,
                "scope_type": "organization",
                "memory_type": "fact",
                "current_content": "This must not land anywhere.",
            },
        )

        # The same answer whether the organization exists or not: nothing is revealed.
        assert message == f"organization '{organization}' not found; this token belongs to 'acme'"
    assert agent.ok("memory-list", {})["memories"] == []


def test_the_token_decides_the_organization_when_none_is_named(agent: McpClient, acme: Tenant) -> None:
    written = agent.ok(
        "memory-write",
        {"scope_type": "organization", "memory_type": "fact", "current_content": "The token names the organization."},
    )

    assert written["organization"] == "acme"
    assert [m["id"] for m in agent.ok("memory-list", {})["memories"]] == [written["id"]]
