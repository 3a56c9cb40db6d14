from __future__ import annotations

import json
import uuid

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.mcp.conftest import Connect, WriteMemory
from tests.mcp.contract import assert_memory_shape

pytestmark = pytest.mark.django_db


def test_the_memory_template_is_listed(agent: McpClient) -> None:
    async def templates(session: Client) -> list[str]:
        return [template.uri_template for template in (await session.list_resource_templates()).resource_templates]

    assert "memory://{id}" in agent.run(templates)


def test_a_memory_reads_as_its_full_object(agent: McpClient, write_memory: WriteMemory) -> None:
    memory = write_memory(current_content="Database migrations run before the new code is deployed.")

    read = json.loads(agent.read_resource(f"memory://{memory['id']}"))

    assert_memory_shape(read)
    assert read["id"] == memory["id"]
    assert read["current_content"] == "Database migrations run before the new code is deployed."


def test_an_unknown_memory_is_not_found(agent: McpClient) -> None:
    missing = str(uuid.uuid4())

    assert "not found" in agent.read_resource_error(f"memory://{missing}")


@pytest.mark.parametrize(("mode", "not_found"), [("legacy", -32002), ("auto", -32602)])
def test_a_missing_resource_is_a_not_found_error_with_the_code_of_its_revision(
    acme: Tenant, connect: Connect, mode: str, not_found: int
) -> None:
    """-32002 up to 2025-11-25; 2026-07-28 (SEP-2164) standardizes on -32602, with the URI in data."""
    missing = str(uuid.uuid4())
    agent = connect(acme.raw_tokens["agent"], mode=mode)

    async def read(session: Client) -> tuple[int, str, object]:
        try:
            await session.read_resource(f"memory://{missing}")  # type: ignore[arg-type]
        except MCPError as error:
            return error.error.code, error.error.message, error.error.data
        raise AssertionError("readable")

    code, message, data = agent.run(read)
    assert (code, message, data) == (not_found, f"memory {missing} not found", {"uri": f"memory://{missing}"})
    code, message = agent.run(_unknown)
    assert code == not_found and "the resources are:" in message and "memory://{id}" in message


async def _unknown(session: Client) -> tuple[int, str]:
    try:
        await session.read_resource("nothing://here")  # type: ignore[arg-type]
    except MCPError as error:
        return error.error.code, error.error.message
    raise AssertionError("readable")
