from __future__ import annotations

import uuid

import pytest

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory

pytestmark = pytest.mark.django_db


def test_delete_answers_with_the_contract_sentence_and_hides_the_memory(
    agent: McpClient, write_memory: WriteMemory
) -> None:
    memory = write_memory(current_content="The legacy billing cron runs at midnight.")

    message = agent.ok("memory-delete", {"id": memory["id"]})

    assert message == f"Memory {memory['id']} has been soft-deleted."
    assert "not found" in agent.error("memory-get", {"id": memory["id"]})
    assert agent.ok("memory-search", {"query": "legacy billing cron"}) == []


def test_deleting_again_is_an_error(agent: McpClient, write_memory: WriteMemory) -> None:
    memory = write_memory()
    agent.ok("memory-delete", {"id": memory["id"]})

    assert "not found" in agent.error("memory-delete", {"id": memory["id"]})


def test_deleting_an_unknown_id_is_an_error(agent: McpClient) -> None:
    missing = str(uuid.uuid4())

    assert agent.error("memory-delete", {"id": missing}) == f"memory {missing} not found"


def test_deleting_with_something_that_is_not_an_id_says_so(agent: McpClient) -> None:
    assert "not a valid memory id" in agent.error("memory-delete", {"id": "last-one"})
