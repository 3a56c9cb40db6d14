"""Tool arguments are checked against each tool's schema: an unknown one is refused by name with
the accepted ones listed, and what the schema refuses is said per argument in plain words."""

from __future__ import annotations

import pytest

from tests.mcp.client import McpClient

pytestmark = pytest.mark.django_db


def test_an_unknown_argument_is_refused_naming_the_accepted_ones(agent: McpClient) -> None:
    error = agent.error("memory-search", {"qeury": "deploys"})

    assert "memory-search does not take 'qeury'" in error
    assert "query" in error.split("its arguments are:")[1]


def test_a_missing_argument_is_named_without_pydantic_text(agent: McpClient) -> None:
    error = agent.error("kg-invalidate", {"id": 1})

    assert "missing required argument 'reason'" in error
    assert "pydantic" not in error and "https://" not in error and "type=" not in error


def test_a_wrong_type_is_said_in_plain_words(agent: McpClient) -> None:
    error = agent.error("memory-search", {"query": "deploys", "limit": "many"})

    assert error.startswith("memory-search: limit:") and "integer" in error
    assert "pydantic" not in error and "https://" not in error


@pytest.mark.parametrize("limit", [0, -1, 1001])
def test_search_refuses_a_limit_out_of_its_schemas_range(agent: McpClient, limit: int) -> None:
    error = agent.error("memory-search", {"query": "deploys", "limit": limit})

    assert "limit must be a whole number from 1 to 1000" in error
