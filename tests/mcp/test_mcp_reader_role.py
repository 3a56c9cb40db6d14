from __future__ import annotations

import pytest

from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.mcp.conftest import Connect, WriteMemory

pytestmark = pytest.mark.django_db


@pytest.fixture
def reader(acme: Tenant, connect: Connect) -> McpClient:
    return connect(acme.raw_tokens["reader"])


def test_a_reader_cannot_write_and_is_told_why(reader: McpClient, agent: McpClient) -> None:
    message = reader.error(
        "memory-write",
        {
            "organization": "acme",
            "scope_type": "organization",
            "memory_type": "fact",
            "current_content": "Readers should not be able to store this.",
        },
    )

    assert "reader role" in message
    assert "agent role" in message
    assert agent.ok("memory-list", {})["memories"] == []


def test_a_reader_cannot_change_anything(reader: McpClient, write_memory: WriteMemory) -> None:
    memory = write_memory()
    other = write_memory()

    for tool, arguments in [
        ("memory-update", {"id": memory["id"], "importance": 5}),
        ("memory-delete", {"id": memory["id"]}),
        ("memory-invalidate", {"id": memory["id"], "reason": "outdated"}),
        ("memory-link", {"source_id": memory["id"], "target_id": other["id"]}),
        (
            "memory-batch-write",
            {"memories": [{"scope_type": "organization", "memory_type": "fact", "current_content": "x"}]},
        ),
    ]:
        result = reader.call(tool, arguments)
        failed = result.is_error or not all(entry["ok"] for entry in result.json())
        assert failed, f"{tool} succeeded for a reader: {result.text[:300]}"
        assert "reader role" in result.text, tool


def test_a_reader_can_read(reader: McpClient, write_memory: WriteMemory) -> None:
    memory = write_memory(current_content="Deploy freezes start on December 20.")

    assert reader.ok("memory-get", {"id": memory["id"]})["id"] == memory["id"]
    assert [found["id"] for found in reader.ok("memory-search", {"query": "deploy freeze"})] == [memory["id"]]
