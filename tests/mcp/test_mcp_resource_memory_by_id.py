from __future__ import annotations

import json
import uuid

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory
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


def test_a_missing_resource_is_a_not_found_error_with_its_own_code(agent: McpClient) -> None:
    missing = str(uuid.uuid4())

    async def read(session: Client) -> tuple[int, str]:
        try:
            await session.read_resource(f"memory://{missing}")  # type: ignore[arg-type]
        except MCPError as error:
            return error.error.code, error.error.message
        raise AssertionError("readable")

    code, message = agent.run(read)
    assert code == -32002
    assert message == f"memory {missing} not found"
    code, message = agent.run(_unknown)
    assert code == -32002 and "the resources are:" in message and "memory://{id}" in message


async def _unknown(session: Client) -> tuple[int, str]:
    try:
        await session.read_resource("nothing://here")  # type: ignore[arg-type]
    except MCPError as error:
        return error.error.code, error.error.message
    raise AssertionError("readable")
