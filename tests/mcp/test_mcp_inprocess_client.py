"""The in-process MCP client runs tools in the test's own transaction, through the real /mcp view."""

from __future__ import annotations

import pytest
from django.db import connection

from memories.models import Memory
from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory

pytestmark = pytest.mark.django_db


def test_what_a_tool_writes_is_visible_to_the_test_before_any_commit(
    acme: Tenant, agent: McpClient, write_memory: WriteMemory
) -> None:
    written = write_memory(current_content="The in-process client shares the test's transaction.")

    # Uncommitted rows are visible on their own connection only: the tool ran on the test's,
    # inside the transaction pytest-django rolls back at the end of the test.
    assert connection.in_atomic_block
    assert Memory.objects.get(pk=written["id"]).organization == acme.organization


def test_the_view_still_authenticates_the_bearer_token(agent: McpClient) -> None:
    assert agent.ok("platform-status", {})["role"] == "agent"
