"""The code tools over MCP: code-index (a directory, or a manifest sync of the agent's files),
code-search, code-index-status, code-projects and code-delete; roles, bad input answered as tool
errors with what to send, and the outsider, who gets nothing of acme's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import Tool

from code_index import pipeline
from code_index.models import CodeChunk, CodeIndexRun
from organizations.models import Repository
from organizations.services import repository_get_or_create
from tests.code_index.conftest import python_module, sha, write_tree
from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.mcp.conftest import Connect

pytestmark = pytest.mark.django_db

CODE_TOOLS = {"code-index", "code-search", "code-index-status", "code-projects", "code-delete"}
FILES = {"src/billing.py": python_module("billing"), "src/heron.py": python_module("blue_heron")}


def sync(client: McpClient, files: dict[str, str]) -> dict[str, Any]:
    """A manifest sync through the tool, then the worker's run; returns the final status."""
    answer = client.ok(
        "code-index",
        {"repository": "payments-api", "manifest": {path: sha(text) for path, text in files.items()}},
    )
    if answer["needed"]:
        sent = client.ok(
            "code-index",
            {"repository": "payments-api", "files": [{"path": p, "content": files[p]} for p in answer["needed"]]},
        )
        assert (sent["received"], sent["remaining_count"], sent["phase"]) == (len(answer["needed"]), 0, "queued")
    assert pipeline.run_index(answer["run_id"]) is not None
    status: dict[str, Any] = client.ok("code-index-status", {"repository": "payments-api"})
    return status


@pytest.fixture
def repository(acme: Tenant) -> Repository:
    return repository_get_or_create(principal=acme.admin, slug="payments-api")


@pytest.fixture
def roots(tmp_path: Path, settings: Any) -> Path:
    settings.CODE_INDEX_ROOTS = [str(tmp_path)]
    return tmp_path


@pytest.fixture
def tools(agent: McpClient) -> dict[str, Tool]:
    async def list_tools(session: Client) -> list[Tool]:
        return (await session.list_tools()).tools

    return {tool.name: tool for tool in agent.run(list_tools) if tool.name in CODE_TOOLS}


def test_the_code_tools_are_listed_with_their_arguments(tools: dict[str, Tool]) -> None:
    assert set(tools) == CODE_TOOLS
    index = tools["code-index"].input_schema
    assert set(index["properties"]) == {"repository", "path", "watch", "manifest", "files", "done"}
    assert index["required"] == ["repository"]
    search = tools["code-search"].input_schema
    assert set(search["properties"]) == {
        "query", "repository", "language", "path", "chunk_type", "limit", "mode", "min_score",
    }  # fmt: skip
    assert search["required"] == ["query"]
    assert search["properties"]["limit"]["maximum"] == 100
    assert (search["properties"]["min_score"]["minimum"], search["properties"]["min_score"]["maximum"]) == (0, 1)
    for name in ("code-search", "code-index-status", "code-projects"):
        assert tools[name].annotations is not None and tools[name].annotations.read_only_hint is True, name
    delete = tools["code-delete"].annotations
    assert delete is not None and delete.destructive_hint is True


@pytest.mark.real_embedder  # which chunks a query finds
def test_an_agent_syncs_its_files_and_searches_them(agent: McpClient, repository: Repository) -> None:
    status = sync(agent, FILES)

    assert {k: status[k] for k in ("repository", "status", "total_files", "indexed_files", "total_chunks")} == {
        "repository": "payments-api",
        "status": "completed",
        "total_files": 2,
        "indexed_files": 2,
        "total_chunks": 2,
    }
    result = agent.call("code-search", {"query": "billing values", "mode": "keyword"})
    hits = result.json()
    assert len(result.texts) == 1
    assert hits[0]["file_path"] == "src/billing.py" and hits[0]["name"] == "billing"
    assert (hits[0]["start_line"], hits[0]["end_line"], hits[0]["chunk_type"], hits[0]["language"]) == (
        1, 10, "function", "python",
    )  # fmt: skip
    projects = agent.ok("code-projects")
    assert [project["repository"] for project in projects] == ["payments-api"]


@pytest.mark.real_embedder  # how a query nothing answers scores
def test_a_query_nothing_answers_is_empty_and_says_what_scored_below_the_floor(
    agent: McpClient, repository: Repository
) -> None:
    sync(agent, FILES)
    nonsense = "purple elephant sings opera under the frozen moon"

    result = agent.call("code-search", {"query": nonsense})

    assert not result.is_error and result.json() == []
    below = result.json(1)
    assert below["below_floor"]["count"] > 0 and below["below_floor"]["best_score"] < 0.01
    assert "min_score: 0" in below["hint"]
    weak = agent.ok("code-search", {"query": nonsense, "min_score": 0})
    assert weak and all(0 <= hit["score"] < 0.01 for hit in weak)


def test_an_agent_indexes_a_directory_of_the_server(agent: McpClient, repository: Repository, roots: Path) -> None:
    write_tree(roots, FILES)

    started = agent.ok("code-index", {"repository": "payments-api", "path": str(roots), "watch": True})

    assert (started["phase"], started["path"], started["watch"]) == ("queued", str(roots), True)
    pipeline.run_index(started["run_id"])
    status = agent.ok("code-index-status", {"repository": "payments-api"})
    assert (status["status"], status["source"], status["total_chunks"], status["watch"]) == (
        "completed", "path", 2, True,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("code-index", {"repository": "payments-api"}, "pass one of `path`"),
        ("code-index", {"repository": "payments-api", "path": "/x", "manifest": {}}, "not path and manifest"),
        ("code-index", {"repository": "payments-api", "manifest": {}, "watch": True}, "`watch` goes with `path`"),
        ("code-index", {"repository": "payment-api", "manifest": {}}, "known repositories: payments-api"),
        ("code-index", {"repository": "payments-api", "path": "/etc"}, "turned off here"),
        ("code-index", {"repository": "payments-api", "manifest": {"a.py": "x"}}, "64 hexadecimal"),
        ("code-index", {"repository": "payments-api", "files": [{"path": "a.py", "content": ""}]}, "manifest first"),
        ("code-search", {"qeury": "x"}, "code-search does not take 'qeury'"),
        ("code-search", {"query": "x", "limit": 0}, "limit must be a whole number from 1 to 100"),
        ("code-search", {"query": "x", "language": "klingon"}, "unknown language 'klingon'"),
        ("code-search", {"query": "x", "min_score": 1.5}, "min_score must be a number from 0 to 1"),
        ("code-search", {"query": "x", "min_score": -0.2}, "min_score must be a number from 0 to 1"),
        ("code-index-status", {"repository": "payments-api"}, "has no code index yet"),
        ("code-delete", {"repository": "payments-api"}, "has no code index yet"),
    ],
)
def test_bad_calls_are_tool_errors_saying_what_to_send(
    agent: McpClient, repository: Repository, tool: str, arguments: dict[str, Any], message: str
) -> None:
    assert message in agent.error(tool, arguments)


def test_readers_search_but_do_not_index_or_delete(
    agent: McpClient, acme: Tenant, connect: Connect, repository: Repository
) -> None:
    reader = connect(acme.raw_tokens["reader"])
    sync(agent, FILES)

    assert reader.ok("code-search", {"query": "billing"})
    assert reader.ok("code-index-status", {"repository": "payments-api"})["status"] == "completed"
    for tool, arguments in [
        ("code-index", {"repository": "payments-api", "manifest": {}}),
        ("code-delete", {"repository": "payments-api"}),
    ]:
        assert "needs the agent role" in reader.error(tool, arguments)
    deleted = agent.ok("code-delete", {"repository": "payments-api"})
    assert (deleted["deleted"], deleted["files"], deleted["chunks"]) == (True, 2, 2)


@pytest.mark.real_embedder  # which chunks a query finds
def test_the_outsider_gets_nothing_of_acme_code(agent: McpClient, outsider: McpClient, repository: Repository) -> None:
    sync(agent, FILES)
    before = (CodeChunk.objects.count(), sorted(CodeIndexRun.objects.values_list("pk", "status")))

    for mode in ("hybrid", "vector", "keyword"):
        result = outsider.call("code-search", {"query": "blue heron billing", "mode": mode})
        assert not result.is_error and result.json() == []
        assert "blue_heron" not in result.text
    assert outsider.ok("code-projects") == []
    for tool, arguments in [
        ("code-index-status", {"repository": "payments-api"}),
        ("code-delete", {"repository": "payments-api"}),
        ("code-index", {"repository": "payments-api", "manifest": {"src/heron.py": sha("x")}}),
        ("code-search", {"query": "heron", "repository": "payments-api"}),
    ]:
        message = outsider.error(tool, arguments)
        assert "does not exist in globex" in message and "acme" not in message, (tool, message)
    assert (CodeChunk.objects.count(), sorted(CodeIndexRun.objects.values_list("pk", "status"))) == before
