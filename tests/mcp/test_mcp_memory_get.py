from __future__ import annotations

import uuid

import pytest

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory
from tests.mcp.contract import assert_memory_shape

pytestmark = pytest.mark.django_db


def test_get_by_id_returns_the_memory_with_links_and_version_count(agent: McpClient, write_memory: WriteMemory) -> None:
    memory = write_memory(current_content="Feature flags live in LaunchDarkly.")
    agent.ok("memory-update", {"id": memory["id"], "importance": 4})

    fetched = agent.ok("memory-get", {"id": memory["id"]})

    assert_memory_shape(fetched)
    assert fetched["id"] == memory["id"]
    assert fetched["current_content"] == "Feature flags live in LaunchDarkly."
    assert fetched["importance"] == 4
    assert fetched["links"] == []
    assert fetched["version_count"] == 2


def test_get_by_ids_returns_those_found_in_order_and_lists_the_missing(
    agent: McpClient, write_memory: WriteMemory
) -> None:
    first = write_memory(current_content="Feature flags live in LaunchDarkly.")
    second = write_memory(current_content="Secrets live in Vault.")
    missing = str(uuid.uuid4())

    result = agent.ok("memory-get", {"ids": [second["id"], missing, first["id"]]})

    assert [memory["id"] for memory in result["memories"]] == [second["id"], first["id"]]
    for memory in result["memories"]:
        assert_memory_shape(memory)
        assert memory["links"] == []
        assert memory["version_count"] == 1
    assert result["missing"] == [missing]


def test_ids_are_matched_however_the_uuid_is_spelled(agent: McpClient, write_memory: WriteMemory) -> None:
    memory = write_memory()

    result = agent.ok("memory-get", {"ids": [memory["id"].upper()]})

    assert [found["id"] for found in result["memories"]] == [memory["id"]]
    assert result["missing"] == []


def test_get_of_an_unknown_id_is_an_error(agent: McpClient) -> None:
    missing = str(uuid.uuid4())

    assert agent.error("memory-get", {"id": missing}) == f"memory {missing} not found"


def test_get_without_an_id_says_what_to_pass(agent: McpClient) -> None:
    assert "pass `id`" in agent.error("memory-get", {})
