"""memory-write and memory-batch-write answer with possible_duplicates."""

from __future__ import annotations

import pytest

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory

pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]

RULE = "Every pull request needs one approving review before it is merged."


def test_writes_name_their_near_duplicates(agent: McpClient, write_memory: WriteMemory) -> None:
    first = write_memory(current_content=RULE)
    second = write_memory(current_content="Pull requests need one approving review before merging.")
    batch = agent.ok(
        "memory-batch-write",
        {"memories": [{"scope_type": "organization", "memory_type": "fact", "current_content": RULE.lower()}]},
    )

    assert first["possible_duplicates"] == []
    assert [hint["id"] for hint in second["possible_duplicates"]] == [first["id"]]
    assert second["possible_duplicates"][0]["title"] == first["title"]
    hints = batch[0]["memory"]["possible_duplicates"]
    assert {hint["id"] for hint in hints} == {first["id"], second["id"]}
