"""globex's token must get nothing of acme's through any tool or resource: not-found or empty, never content."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory

pytestmark = pytest.mark.django_db

SECRET = "Acme's merger with Initech closes on 2027-03-01; codename BLUE HERON."


@pytest.fixture
def acme_memories(agent: McpClient, write_memory: WriteMemory) -> tuple[dict[str, Any], dict[str, Any]]:
    secret = write_memory(memory_type="fact", current_content=SECRET, status="active", importance=7)
    other = write_memory(current_content="Acme's finance team approves all mergers.")
    agent.ok("memory-link", {"source_id": secret["id"], "target_id": other["id"]})
    return secret, other


@pytest.fixture
def globex_memory(outsider: McpClient) -> dict[str, Any]:
    return outsider.ok(
        "memory-write",
        {
            "organization": "globex",
            "scope_type": "organization",
            "memory_type": "fact",
            "current_content": "Globex merger rumours are handled by legal.",
        },
    )


def assert_no_acme_content(text: str) -> None:
    assert "BLUE HERON" not in text
    assert "Initech" not in text
    assert "finance team" not in text
    assert '"acme"' not in text


def test_searching_lists_and_recall_show_nothing_of_acme(
    outsider: McpClient, acme_memories: tuple[dict[str, Any], dict[str, Any]], globex_memory: dict[str, Any]
) -> None:
    for tool, arguments in [
        ("memory-search", {"query": "merger codename blue heron"}),
        ("memory-search", {"query": "merger", "mode": "keyword"}),
        ("memory-search", {}),
        ("memory-vector-search", {"query": "when does the merger close"}),
        ("memory-list", {}),
        ("memory-recall", {"phases": ["work"], "query": "merger codename"}),
        ("platform-status", {}),
    ]:
        result = outsider.call(tool, arguments)
        assert not result.is_error, f"{tool}: {result.text}"
        assert_no_acme_content(result.text)

    found = outsider.ok("memory-search", {"query": "merger"})
    assert [memory["id"] for memory in found] == [globex_memory["id"]]
    assert outsider.ok("platform-status", {})["memories"]["total"] == 1


def test_the_index_shows_nothing_of_acme(
    outsider: McpClient, acme_memories: tuple[dict[str, Any], dict[str, Any]], globex_memory: dict[str, Any]
) -> None:
    index = json.loads(outsider.read_resource("memory://index"))

    assert [entry["id"] for entry in index] == [globex_memory["id"]]


def test_reading_an_acme_memory_is_not_found(
    outsider: McpClient, acme_memories: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    secret, other = acme_memories

    for tool, arguments in [
        ("memory-get", {"id": secret["id"]}),
        ("memory-history", {"id": secret["id"]}),
    ]:
        message = outsider.error(tool, arguments)
        assert message == f"memory {secret['id']} not found", tool

    many = outsider.ok("memory-get", {"ids": [secret["id"], other["id"]]})
    assert many == {"memories": [], "missing": [secret["id"], other["id"]]}
    message = outsider.read_resource_error(f"memory://{secret['id']}")
    assert "not found" in message
    assert_no_acme_content(message)


def test_changing_an_acme_memory_is_not_found_and_changes_nothing(
    outsider: McpClient,
    agent: McpClient,
    acme_memories: tuple[dict[str, Any], dict[str, Any]],
    globex_memory: dict[str, Any],
) -> None:
    secret, other = acme_memories

    for tool, arguments in [
        ("memory-update", {"id": secret["id"], "current_content": "Overwritten by globex."}),
        ("memory-delete", {"id": secret["id"]}),
        ("memory-invalidate", {"id": secret["id"], "reason": "globex says so"}),
        ("memory-invalidate", {"id": globex_memory["id"], "reason": "x", "superseded_by": secret["id"]}),
        ("memory-link", {"source_id": secret["id"], "target_id": other["id"], "relation_type": "contradicts"}),
        ("memory-link", {"source_id": globex_memory["id"], "target_id": secret["id"]}),
        ("memory-link", {"source_id": secret["id"], "target_id": globex_memory["id"]}),
    ]:
        message = outsider.error(tool, arguments)
        assert "not found" in message, f"{tool}: {message}"
        assert_no_acme_content(message)

    after = agent.ok("memory-get", {"id": secret["id"]})
    assert after["current_content"] == SECRET
    assert after["status"] == "active"
    assert after["version_count"] == 1
    assert after["links"] == [{"direction": "outgoing", "relation_type": "related", "memory_id": other["id"]}]
    assert outsider.ok("memory-get", {"id": globex_memory["id"]})["status"] == "draft"


def test_upserting_with_an_acme_id_does_not_touch_acme(
    outsider: McpClient, agent: McpClient, acme_memories: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    secret, _ = acme_memories

    result = outsider.call(
        "memory-write",
        {
            "organization": "globex",
            "id": secret["id"],
            "scope_type": "organization",
            "memory_type": "fact",
            "current_content": "Globex now owns this id.",
        },
    )

    assert result.is_error
    assert_no_acme_content(result.text)
    assert agent.ok("memory-get", {"id": secret["id"]})["current_content"] == SECRET


def test_writing_into_acme_is_not_found(outsider: McpClient, agent: McpClient) -> None:
    entry = {"scope_type": "organization", "memory_type": "fact", "current_content": "Planted by globex."}

    assert "not found" in outsider.error("memory-write", {"organization": "acme", **entry})
    batch = outsider.call("memory-batch-write", {"organization": "acme", "memories": [entry]})
    assert "not found" in batch.text
    assert agent.ok("memory-list", {})["memories"] == []
