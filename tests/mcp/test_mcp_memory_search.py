from __future__ import annotations

import json

import pytest

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory
from tests.mcp.contract import assert_memory_shape

pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]

TUESDAY = "Deploys to production happen only on Tuesdays after the acceptance tests pass."


def test_search_returns_memory_objects_with_relevance_best_first(agent: McpClient, write_memory: WriteMemory) -> None:
    coffee = write_memory(current_content="The office coffee machine is on the third floor.", importance=10)
    deploys = write_memory(current_content=TUESDAY, importance=1)

    results = agent.ok("memory-search", {"query": "when do production deploys happen"})

    for memory in results:
        assert_memory_shape(memory)
        assert isinstance(memory["relevance"], int | float)
    ids = [memory["id"] for memory in results]
    assert ids[0] == deploys["id"]
    if coffee["id"] in ids:
        assert results[0]["relevance"] > results[ids.index(coffee["id"])]["relevance"]


def test_equal_relevance_is_ordered_by_importance_then_newest(agent: McpClient, write_memory: WriteMemory) -> None:
    older = write_memory(title="Tuesday deploys", current_content=TUESDAY, importance=5)
    newer = write_memory(title="Tuesday deploys", current_content=TUESDAY, importance=5)
    important = write_memory(title="Tuesday deploys", current_content=TUESDAY, importance=9)

    results = agent.ok("memory-search", {"query": "production deploys on Tuesdays"})

    assert [memory["id"] for memory in results] == [important["id"], newer["id"], older["id"]]
    assert len({memory["relevance"] for memory in results}) == 1


def test_filters_narrow_the_results(agent: McpClient, write_memory: WriteMemory) -> None:
    rule = write_memory(memory_type="business_rule", current_content=TUESDAY)
    write_memory(memory_type="fact", current_content="Production deploys took 14 minutes on average last quarter.")

    results = agent.ok("memory-search", {"query": "deploy", "filters": {"memory_type": "business_rule"}})

    assert [memory["id"] for memory in results] == [rule["id"]]


def test_a_next_cursor_block_comes_only_while_more_results_exist(agent: McpClient, write_memory: WriteMemory) -> None:
    written = {write_memory(current_content=f"Deploy checklist item {n}: {TUESDAY}")["id"] for n in range(3)}

    seen: list[str] = []
    cursor = None
    for _ in range(len(written)):
        arguments = {"query": "deploy checklist", "limit": 1} | ({"cursor": cursor} if cursor else {})
        page = agent.call("memory-search", arguments)
        assert not page.is_error, page.text
        results = page.json()
        assert len(results) == 1
        seen.append(results[0]["id"])
        if len(seen) < len(written):
            assert len(page.texts) == 2, "a page with more after it carries a next_cursor block"
            cursor = json.loads(page.texts[1])["next_cursor"]
            assert isinstance(cursor, str)
            assert cursor
        else:
            assert len(page.texts) == 1, f"the last page has no next_cursor: {page.texts}"

    assert set(seen) == written
    assert len(seen) == len(set(seen))


def test_without_more_results_there_is_a_single_block(agent: McpClient, write_memory: WriteMemory) -> None:
    write_memory(current_content=TUESDAY)

    page = agent.call("memory-search", {"query": "deploy", "limit": 5})

    assert not page.is_error
    assert len(page.texts) == 1


def test_search_without_a_query_browses_by_importance(agent: McpClient, write_memory: WriteMemory) -> None:
    low = write_memory(current_content="Lunch is at noon.", importance=2)
    high = write_memory(current_content=TUESDAY, importance=8)

    results = agent.ok("memory-search", {})

    assert [memory["id"] for memory in results] == [high["id"], low["id"]]
