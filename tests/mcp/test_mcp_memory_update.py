from __future__ import annotations

import pytest

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory
from tests.mcp.contract import assert_memory_shape

pytestmark = pytest.mark.django_db


def test_update_changes_only_the_fields_sent(agent: McpClient, write_memory: WriteMemory) -> None:
    memory = write_memory(
        current_content="Staging is reset every night at 02:00 UTC.", importance=4, metadata={"env": "staging"}
    )

    updated = agent.ok("memory-update", {"id": memory["id"], "status": "active"})

    assert_memory_shape(updated)
    assert updated["status"] == "active"
    unchanged = ("current_content", "title", "importance", "metadata", "scope_type", "memory_type", "created_at")
    for key in unchanged:
        assert updated[key] == memory[key], key
    assert updated["updated_at"] >= memory["updated_at"]


def test_update_with_new_content_is_what_readers_get(agent: McpClient, write_memory: WriteMemory) -> None:
    memory = write_memory(current_content="Staging is reset every night at 02:00 UTC.")

    agent.ok(
        "memory-update", {"id": memory["id"], "current_content": "Staging is reset every Sunday.", "importance": 3}
    )

    fetched = agent.ok("memory-get", {"id": memory["id"]})
    assert fetched["current_content"] == "Staging is reset every Sunday."
    assert fetched["importance"] == 3


def test_sending_the_same_update_twice_changes_nothing_the_second_time(
    agent: McpClient, write_memory: WriteMemory
) -> None:
    memory = write_memory()
    arguments = {"id": memory["id"], "status": "active", "importance": 7, "title": "Payments on PostgreSQL"}

    first = agent.ok("memory-update", arguments)
    second = agent.ok("memory-update", arguments)

    assert second == first
    history = agent.ok("memory-history", {"id": memory["id"]})["versions"]
    assert len(history) == 2
