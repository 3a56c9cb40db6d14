"""Both protocol eras over HTTP: a 2025-11-25 client's ``initialize`` and a 2026-07-28 client's
``server/discover`` announce the same server, capabilities and instructions."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.mcp.client import McpClient

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.mcp_live]


def _announced(client: Client) -> Any:
    session = client.session
    return session.initialize_result or session.discover_result


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_both_eras_announce_the_memory_server_and_its_capabilities(
    acme: Any, mcp_url: str, mode: str, version: str
) -> None:
    client = McpClient(mcp_url, acme.raw_tokens["agent"], mode=mode)
    try:

        async def announced(session: Client) -> tuple[str, Any]:
            return session.protocol_version, _announced(session)

        protocol, result = client.run(announced)
    finally:
        client.close()

    assert protocol == version
    assert client_name(result) == "Memory MCP Server"
    assert result.capabilities.tools is not None
    assert result.capabilities.resources is not None
    assert result.capabilities.prompts is not None
    assert result.instructions and "memory-search" in result.instructions


def client_name(result: Any) -> str:
    info = getattr(result, "server_info", None)
    if info is None:  # a discover result names the server in its _meta stamp
        info = result.meta["io.modelcontextprotocol/serverInfo"]
        return str(info["name"])
    return str(info.name)
