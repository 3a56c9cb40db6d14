from __future__ import annotations

import pytest

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory

pytestmark = pytest.mark.django_db


def test_history_lists_every_version_newest_first_with_reasons(agent: McpClient, write_memory: WriteMemory) -> None:
    memory = write_memory(current_content="The on-call rotation changes on Mondays.")
    agent.ok("memory-update", {"id": memory["id"], "importance": 6, "reason": "it pages people"})
    agent.ok(
        "memory-update",
        {"id": memory["id"], "current_content": "The on-call rotation changes on Wednesdays.", "reason": "new policy"},
    )

    history = agent.ok("memory-history", {"id": memory["id"]})

    assert history["id"] == memory["id"]
    versions = history["versions"]
    assert [version["version"] for version in versions] == [3, 2, 1]
    assert versions[0]["reason"] == "new policy"
    assert "current_content" in versions[0]["changed_fields"]
    assert versions[1]["reason"] == "it pages people"
    assert versions[1]["changed_fields"] == ["importance"]
    assert versions[0]["snapshot"]["current_content"] == "The on-call rotation changes on Wednesdays."
    assert versions[2]["snapshot"]["current_content"] == "The on-call rotation changes on Mondays."
    for version in versions:
        assert version["actor"]
        assert version["created_at"]


def test_history_of_a_deleted_memory_is_still_readable(agent: McpClient, write_memory: WriteMemory) -> None:
    memory = write_memory()
    agent.ok("memory-delete", {"id": memory["id"]})

    versions = agent.ok("memory-history", {"id": memory["id"]})["versions"]

    assert len(versions) == 2
    assert versions[0]["change"] != versions[1]["change"]
