from __future__ import annotations

import pytest
from mcp import ClientSession
from mcp.types import InitializeResult

from tests.mcp.client import McpClient

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.mcp_live]


def test_initialize_announces_the_memory_server_and_its_capabilities(agent: McpClient) -> None:
    async def initialize(session: ClientSession) -> InitializeResult:
        return await session.initialize()

    result = agent.run(initialize)

    assert result.serverInfo.name == "Memory MCP Server"
    assert result.capabilities.tools is not None
    assert result.capabilities.resources is not None
    assert result.capabilities.prompts is not None
    assert result.instructions and "memory-search" in result.instructions
