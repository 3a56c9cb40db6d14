from __future__ import annotations

import pytest

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory

pytestmark = pytest.mark.django_db


def test_linking_answers_with_the_contract_sentence(agent: McpClient, write_memory: WriteMemory) -> None:
    source = write_memory(current_content="Refunds over 500 EUR need a second approver.")
    target = write_memory(current_content="Approvers are members of the finance team.")

    message = agent.ok("memory-link", {"source_id": source["id"], "target_id": target["id"]})

    assert message == "Memories linked successfully as 'related'."
    links = agent.ok("memory-get", {"id": source["id"]})["links"]
    assert links == [{"direction": "outgoing", "relation_type": "related", "memory_id": target["id"]}]
    back = agent.ok("memory-get", {"id": target["id"]})["links"]
    assert back == [{"direction": "incoming", "relation_type": "related", "memory_id": source["id"]}]


def test_linking_twice_adds_nothing(agent: McpClient, write_memory: WriteMemory) -> None:
    source = write_memory(current_content="Refunds over 500 EUR need a second approver.")
    target = write_memory(current_content="Approvers are members of the finance team.")
    arguments = {"source_id": source["id"], "target_id": target["id"], "relation_type": "depends_on"}

    first = agent.ok("memory-link", arguments)
    second = agent.ok("memory-link", arguments)

    assert first == second == "Memories linked successfully as 'depends_on'."
    assert len(agent.ok("memory-get", {"id": source["id"]})["links"]) == 1


def test_an_unknown_relation_type_lists_the_known_ones(agent: McpClient, write_memory: WriteMemory) -> None:
    source, target = write_memory(), write_memory()

    message = agent.error(
        "memory-link", {"source_id": source["id"], "target_id": target["id"], "relation_type": "friends_with"}
    )

    assert "friends_with" in message
    assert "depends_on" in message
