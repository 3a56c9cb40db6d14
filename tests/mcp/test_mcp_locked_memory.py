from __future__ import annotations

import pytest

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory

pytestmark = pytest.mark.django_db

RULE = "Production database credentials are rotated every 90 days."


@pytest.fixture
def locked(curator: McpClient, write_memory: WriteMemory) -> dict[str, object]:
    return write_memory(curator, memory_type="business_rule", status="locked", importance=9, current_content=RULE)


def test_an_agent_cannot_update_a_locked_memory(agent: McpClient, locked: dict[str, object]) -> None:
    message = agent.error("memory-update", {"id": locked["id"], "current_content": "Rotate them yearly."})

    assert "locked" in message
    assert "curator" in message
    assert agent.ok("memory-get", {"id": locked["id"]})["current_content"] == RULE


def test_an_agent_cannot_delete_or_invalidate_a_locked_memory(agent: McpClient, locked: dict[str, object]) -> None:
    assert "locked" in agent.error("memory-delete", {"id": locked["id"]})
    assert "locked" in agent.error("memory-invalidate", {"id": locked["id"], "reason": "outdated"})
    assert agent.ok("memory-get", {"id": locked["id"]})["status"] == "locked"


def test_an_agent_cannot_lock_a_memory(agent: McpClient, write_memory: WriteMemory) -> None:
    memory = write_memory()

    message = agent.error("memory-update", {"id": memory["id"], "status": "locked"})

    assert "curator" in message


def test_a_curator_can_change_a_locked_memory(curator: McpClient, locked: dict[str, object]) -> None:
    updated = curator.ok("memory-update", {"id": locked["id"], "current_content": "Rotate them every 60 days."})

    assert updated["current_content"] == "Rotate them every 60 days."
    assert updated["status"] == "locked"
