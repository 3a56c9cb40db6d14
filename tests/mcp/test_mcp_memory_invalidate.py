from __future__ import annotations

import pytest

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory
from tests.mcp.contract import assert_memory_shape

pytestmark = pytest.mark.django_db


def test_invalidate_deprecates_and_points_to_the_successor(agent: McpClient, write_memory: WriteMemory) -> None:
    old = write_memory(current_content="The support hotline closes at 17:00.", status="active")
    new = write_memory(current_content="The support hotline closes at 19:00.", status="active")

    invalidated = agent.ok(
        "memory-invalidate", {"id": old["id"], "reason": "hours extended in March", "superseded_by": new["id"]}
    )

    assert_memory_shape(invalidated)
    assert invalidated["status"] == "deprecated"
    assert invalidated["superseded_by"] == new["id"]
    assert invalidated["valid_until"]
    history = agent.ok("memory-history", {"id": old["id"]})["versions"]
    assert history[0]["reason"] == "hours extended in March"
    found = agent.ok("memory-search", {"query": "support hotline closes"})
    assert [memory["id"] for memory in found] == [new["id"]]


def test_invalidate_needs_a_reason(agent: McpClient, write_memory: WriteMemory) -> None:
    memory = write_memory()

    assert "reason is required" in agent.error("memory-invalidate", {"id": memory["id"], "reason": " "})
    assert agent.ok("memory-get", {"id": memory["id"]})["status"] == "draft"


def test_an_unknown_successor_is_refused(agent: McpClient, write_memory: WriteMemory) -> None:
    memory = write_memory()

    message = agent.error(
        "memory-invalidate",
        {"id": memory["id"], "reason": "replaced", "superseded_by": "00000000-0000-4000-8000-000000000000"},
    )

    assert "not found" in message
    assert agent.ok("memory-get", {"id": memory["id"]})["status"] == "draft"
