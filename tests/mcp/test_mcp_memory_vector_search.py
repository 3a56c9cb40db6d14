from __future__ import annotations

import pytest

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory
from tests.mcp.contract import assert_memory_shape

pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]


def test_vector_search_finds_by_meaning_without_shared_words(agent: McpClient, write_memory: WriteMemory) -> None:
    write_memory(current_content="The office coffee machine is on the third floor.")
    write_memory(current_content="Our brand colour is teal, hex 008080.")
    rule = write_memory(current_content="Customer passwords are hashed with Argon2id before storage.")

    results = agent.ok("memory-vector-search", {"query": "how do we protect user credentials"})

    assert results[0]["id"] == rule["id"]
    for memory in results:
        assert_memory_shape(memory)
    similarities = [memory["similarity"] for memory in results]
    assert similarities == sorted(similarities, reverse=True)


def test_vector_search_needs_a_query(agent: McpClient) -> None:
    result = agent.call("memory-vector-search", {})

    assert result.is_error
    assert "query" in result.text
