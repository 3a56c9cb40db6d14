from __future__ import annotations

import pytest

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory
from tests.mcp.contract import assert_memory_shape

pytestmark = pytest.mark.django_db


@pytest.fixture
def three(write_memory: WriteMemory) -> list[dict[str, object]]:
    return [
        write_memory(title="Beta rule", current_content="Beta environments expire after 7 days.", importance=3),
        write_memory(title="Alpha rule", current_content="Alpha builds are never shipped.", importance=9),
        write_memory(title="Gamma rule", current_content="Gamma rays are not our problem.", importance=1),
    ]


def ids(memories: list[dict[str, object]]) -> list[object]:
    return [memory["id"] for memory in memories]


def test_list_sorts_by_importance_by_default(agent: McpClient, three: list[dict[str, object]]) -> None:
    result = agent.ok("memory-list", {})

    assert ids(result["memories"]) == ids([three[1], three[0], three[2]])
    assert result["next_cursor"] is None
    for memory in result["memories"]:
        assert_memory_shape(memory)


def test_list_sorts_as_asked(agent: McpClient, three: list[dict[str, object]]) -> None:
    agent.ok("memory-update", {"id": three[1]["id"], "importance": 8})
    orders = {"title": [1, 0, 2], "created_at": [2, 1, 0], "updated_at": [1, 2, 0], "importance": [1, 0, 2]}

    for sort_by, order in orders.items():
        result = agent.ok("memory-list", {"sort_by": sort_by})
        assert ids(result["memories"]) == ids([three[n] for n in order]), sort_by


def test_the_cursor_walks_through_every_page(agent: McpClient, three: list[dict[str, object]]) -> None:
    first = agent.ok("memory-list", {"sort_by": "title", "limit": 2})
    second = agent.ok("memory-list", {"sort_by": "title", "limit": 2, "cursor": first["next_cursor"]})

    assert ids(first["memories"]) == ids([three[1], three[0]])
    assert first["next_cursor"]
    assert ids(second["memories"]) == ids([three[2]])
    assert second["next_cursor"] is None


def test_filters_apply(agent: McpClient, write_memory: WriteMemory) -> None:
    wanted = write_memory(memory_type="risk", current_content="The vendor may end support for v2.")
    write_memory(memory_type="fact", current_content="We use vendor v2.")

    result = agent.ok("memory-list", {"filters": {"memory_type": "risk"}})

    assert ids(result["memories"]) == [wanted["id"]]


def test_a_bad_sort_or_cursor_is_explained(agent: McpClient) -> None:
    assert "title" in agent.error("memory-list", {"sort_by": "colour"})
    assert "cursor is not valid" in agent.error("memory-list", {"cursor": "not-a-cursor"})
