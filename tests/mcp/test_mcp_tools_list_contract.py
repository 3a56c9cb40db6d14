from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp_types import Tool

from tests.mcp.client import McpClient
from tests.mcp.contract import MEMORY_TYPES, SCOPES, STATUSES, TOOLS

pytestmark = pytest.mark.django_db

# Seed 002's request schemas: argument names and which of them are required. One relaxation: the
# contract requires memory-write's `organization`, which the token already decides; it is accepted
# and checked but not required, so every request the contract allows is still allowed.
CONTRACT_ARGUMENTS: dict[str, tuple[set[str], set[str]]] = {
    "memory-write": (
        {
            "organization",
            "scope_type",
            "memory_type",
            "current_content",
            "id",
            "repository",
            "title",
            "status",
            "importance",
            "metadata",
        },
        {"scope_type", "memory_type", "current_content"},
    ),
    "memory-update": (
        {"id", "title", "current_content", "status", "scope_type", "memory_type", "importance", "metadata"},
        {"id"},
    ),
    "memory-delete": ({"id"}, {"id"}),
    "memory-search": ({"query", "filters"}, set()),
    "memory-link": ({"source_id", "target_id", "relation_type"}, {"source_id", "target_id"}),
}


@pytest.fixture
def tools(agent: McpClient) -> dict[str, Tool]:
    async def list_tools(session: Client) -> list[Tool]:
        return (await session.list_tools()).tools

    return {tool.name: tool for tool in agent.run(list_tools)}


def enum_of(schema: dict[str, Any]) -> list[str] | None:
    if "enum" in schema:
        return list(schema["enum"])
    for option in schema.get("anyOf", []):
        if "enum" in option:
            return list(option["enum"])
    return None


def test_the_server_lists_the_thirteen_memory_tools(tools: dict[str, Tool]) -> None:
    # Knowledge-graph tools (kg-*, memory-graph) come on top of the contract's thirteen.
    assert set(tools) >= TOOLS, sorted(TOOLS - set(tools))
    for tool in tools.values():
        assert tool.description, f"{tool.name} has no description"
        assert tool.input_schema["type"] == "object"
        # The schema says what a call checks: an argument the tool does not take is refused.
        assert tool.input_schema["additionalProperties"] is False, tool.name


def test_contract_tools_take_the_contract_arguments(tools: dict[str, Tool]) -> None:
    for name, (arguments, required) in CONTRACT_ARGUMENTS.items():
        schema = tools[name].input_schema
        assert arguments <= set(schema["properties"]), (name, sorted(arguments - set(schema["properties"])))
        assert set(schema.get("required", [])) == required, name


def test_memory_write_enums_and_defaults_follow_the_contract(tools: dict[str, Tool]) -> None:
    properties = tools["memory-write"].input_schema["properties"]

    assert enum_of(properties["scope_type"]) == SCOPES
    assert enum_of(properties["memory_type"]) == MEMORY_TYPES
    assert enum_of(properties["status"]) == STATUSES
    assert properties["status"]["default"] == "draft"
    assert properties["importance"]["default"] == 1
    assert (properties["importance"]["minimum"], properties["importance"]["maximum"]) == (1, 10)


def test_memory_update_offers_the_same_enums(tools: dict[str, Tool]) -> None:
    properties = tools["memory-update"].input_schema["properties"]

    assert enum_of(properties["scope_type"]) == SCOPES
    assert enum_of(properties["memory_type"]) == MEMORY_TYPES
    assert enum_of(properties["status"]) == STATUSES


def test_memory_link_relation_defaults_to_related(tools: dict[str, Tool]) -> None:
    relation = tools["memory-link"].input_schema["properties"]["relation_type"]

    assert relation["default"] == "related"
    assert "related" in (enum_of(relation) or [])


def test_annotations_tell_agents_which_tools_only_read_and_which_destroy(tools: dict[str, Tool]) -> None:
    readers = {"memory-search", "memory-vector-search", "memory-get", "memory-history", "memory-list"}
    readers |= {"memory-recall", "platform-status", "repository-list"}
    for name in readers:
        assert tools[name].annotations is not None
        assert tools[name].annotations.read_only_hint is True, name
    for name in TOOLS - readers:
        assert tools[name].annotations is not None
        assert not tools[name].annotations.read_only_hint, name
    delete = tools["memory-delete"].annotations
    assert delete is not None
    assert delete.destructive_hint is True
