from __future__ import annotations

from typing import Any

import pytest

from tests.mcp.client import McpClient
from tests.mcp.contract import MEMORY_TYPES, SCOPES

pytestmark = pytest.mark.django_db


def write_arguments(**changes: Any) -> dict[str, Any]:
    return {
        "organization": "acme",
        "scope_type": "organization",
        "memory_type": "fact",
        "current_content": "Build artefacts are kept for 30 days.",
    } | changes


def test_an_unknown_memory_type_is_an_error_that_lists_the_allowed_ones(agent: McpClient) -> None:
    message = agent.error("memory-write", write_arguments(memory_type="rule"))

    assert "'rule'" in message
    for memory_type in MEMORY_TYPES:
        assert memory_type in message
    assert agent.ok("memory-list", {})["memories"] == []


def test_an_unknown_scope_is_an_error_that_lists_the_allowed_ones(agent: McpClient) -> None:
    message = agent.error("memory-write", write_arguments(scope_type="team"))

    assert "'team'" in message
    for scope in SCOPES:
        assert scope in message


def test_an_unknown_status_in_an_update_lists_the_allowed_ones(agent: McpClient) -> None:
    memory = agent.ok("memory-write", write_arguments())

    message = agent.error("memory-update", {"id": memory["id"], "status": "approved"})

    assert "'approved'" in message
    assert "draft" in message
    assert agent.ok("memory-get", {"id": memory["id"]})["status"] == "draft"


def test_invalid_writes_are_explained_without_a_stack_trace(agent: McpClient) -> None:
    for changes, mentioned in [
        ({"importance": 11}, "importance"),
        ({"importance": 0}, "importance"),
        ({"current_content": "   "}, "current_content"),
        ({"scope_type": "repository"}, "repository"),
        ({"metadata": ["not", "an", "object"]}, "metadata"),
        ({"title": "x" * 500}, "title"),
    ]:
        message = agent.error("memory-write", write_arguments(**changes))

        assert mentioned in message, (changes, message)
        assert "Traceback" not in message
        assert 'File "' not in message
    assert agent.ok("memory-list", {})["memories"] == []
