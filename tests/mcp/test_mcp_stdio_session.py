from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import Tenant
from tests.mcp.client import ToolResult, call_tool
from tests.mcp.conftest import STDIO_COMMAND
from tests.mcp.contract import TOOLS, assert_memory_shape

pytestmark = pytest.mark.django_db(transaction=True)


async def agent_session(parameters: StdioServerParameters, errlog: Path, mode: str) -> dict[str, Any]:
    with errlog.open("w") as log:
        async with Client(stdio_client(parameters, errlog=log), mode=mode, cache=None) as session:
            init = session.protocol_version, session.server_info
            tools = {tool.name for tool in (await session.list_tools()).tools}
            written = await call_tool(
                session,
                "memory-write",
                {
                    "organization": "acme",
                    "scope_type": "organization",
                    "memory_type": "convention",
                    "current_content": "Commit messages follow the Conventional Commits format.",
                    "importance": 6,
                },
            )
            found = await call_tool(session, "memory-search", {"query": "commit message format"})
            status = await call_tool(session, "platform-status", {})
    return {"init": init, "tools": tools, "written": written, "found": found, "status": status}


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_an_agent_works_over_stdio(
    acme: Tenant, stdio_env: Callable[..., dict[str, str]], tmp_path: Path, mode: str, version: str
) -> None:
    parameters = StdioServerParameters(
        command=STDIO_COMMAND[0],
        args=STDIO_COMMAND[1:],
        env=stdio_env(acme.raw_tokens["agent"]),
        cwd=settings.BASE_DIR,
    )

    outcome = asyncio.run(agent_session(parameters, tmp_path / "stderr.log", mode))

    protocol, server_info = outcome["init"]
    assert protocol == version and server_info.name == "Memory MCP Server"
    assert outcome["tools"] >= TOOLS
    written: ToolResult = outcome["written"]
    assert not written.is_error, written.text
    memory = written.json()
    assert_memory_shape(memory)
    assert memory["organization"] == "acme"
    found: ToolResult = outcome["found"]
    assert [hit["id"] for hit in found.json()] == [memory["id"]]
    status = json.loads(outcome["status"].texts[0])
    assert (status["organization"], status["role"]) == ("acme", "agent")


def test_a_token_file_works_instead_of_the_environment(
    acme: Tenant, stdio_env: Callable[..., dict[str, str]], tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(acme.raw_tokens["curator"] + "\n")
    parameters = StdioServerParameters(
        command=STDIO_COMMAND[0],
        args=[*STDIO_COMMAND[1:], "--token-file", str(token_file)],
        env=stdio_env(),
        cwd=settings.BASE_DIR,
    )

    outcome = asyncio.run(agent_session(parameters, tmp_path / "stderr.log", "auto"))

    status = json.loads(outcome["status"].texts[0])
    assert (status["organization"], status["role"]) == ("acme", "curator")
