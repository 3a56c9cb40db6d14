from __future__ import annotations

import uuid

import pytest

from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory
from tests.mcp.contract import assert_memory_shape

pytestmark = pytest.mark.django_db


def test_write_returns_the_contract_memory_object_with_defaults(agent: McpClient) -> None:
    memory = agent.ok(
        "memory-write",
        {
            "organization": "acme",
            "scope_type": "organization",
            "memory_type": "business_rule",
            "current_content": "All deployments must pass acceptance tests.",
        },
    )

    assert_memory_shape(memory)
    assert memory["organization"] == "acme"
    assert memory["repository"] is None
    assert memory["scope_type"] == "organization"
    assert memory["memory_type"] == "business_rule"
    assert memory["current_content"] == "All deployments must pass acceptance tests."
    assert memory["status"] == "draft"
    assert memory["importance"] == 1
    assert memory["metadata"] == {}


def test_write_keeps_every_given_field(curator: McpClient) -> None:
    # A curator: below that role the write policy keeps a convention as a draft and caps importance at 7.
    memory = curator.ok(
        "memory-write",
        {
            "organization": "acme",
            "scope_type": "repository",
            "repository": "payments-api",
            "create_repository": True,
            "memory_type": "convention",
            "current_content": "Money amounts are integers in minor units, never floats.",
            "title": "Money in minor units",
            "status": "active",
            "importance": 10,
            "metadata": {"ticket": "PAY-12"},
        },
    )

    assert_memory_shape(memory)
    assert memory["repository"] == "payments-api"
    assert memory["scope_type"] == "repository"
    assert memory["title"] == "Money in minor units"
    assert memory["status"] == "active"
    assert memory["importance"] == 10
    assert memory["metadata"] == {"ticket": "PAY-12"}


def test_write_without_id_creates_a_new_memory_each_time(write_memory: WriteMemory) -> None:
    first = write_memory(current_content="Invoices are sent on the first of the month.")
    second = write_memory(current_content="Invoices are sent on the first of the month.")

    assert first["id"] != second["id"]


def test_write_with_an_id_creates_then_updates_that_memory(agent: McpClient, write_memory: WriteMemory) -> None:
    wanted = str(uuid.uuid4())

    created = write_memory(id=wanted, current_content="Refunds take five business days.")
    upserted = write_memory(id=wanted, current_content="Refunds take three business days.", importance=6)

    assert created["id"] == upserted["id"] == wanted
    assert upserted["current_content"] == "Refunds take three business days."
    assert upserted["importance"] == 6
    assert upserted["created_at"] == created["created_at"]
    listed = agent.ok("memory-list", {})["memories"]
    assert [memory["id"] for memory in listed] == [wanted]


def test_an_unknown_repository_is_refused_with_the_known_ones(agent: McpClient) -> None:
    write = {"scope_type": "repository", "memory_type": "fact", "current_content": "Builds run on arm64."}
    agent.ok("memory-write", {**write, "repository": "payments-api", "create_repository": True})

    message = agent.error("memory-write", {**write, "repository": "paymnets-api"})

    assert "repository 'paymnets-api' does not exist in acme (known repositories: payments-api)" in message
    assert [m["repository"] for m in agent.ok("memory-list", {})["memories"]] == ["payments-api"]
