"""The graph and knowledge tools end to end: the official MCP client through the real /mcp view
(in-process, tests/mcp/inprocess.py), each tool's success, one error each, and the outsider's token."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.mcp.conftest import Connect, WriteMemory

pytestmark = pytest.mark.django_db

TRIPLE_KEYS = {"subject", "predicate", "object", "valid_from", "valid_to", "recorded_at", "confidence", "provenance"}


@pytest.fixture
def reader(acme: Tenant, connect: Connect) -> McpClient:
    return connect(acme.raw_tokens["reader"])


def _assert(client: McpClient, subject: str, predicate: str, object: str, **more: Any) -> dict[str, Any]:
    fact: dict[str, Any] = client.ok("kg-assert", {"subject": subject, "predicate": predicate, "object": object} | more)
    return fact


def test_memory_link_and_memory_graph(agent: McpClient, write_memory: WriteMemory) -> None:
    a, b, c = (write_memory(current_content=f"Service {name} calls the next service.") for name in "ABC")
    link = {"source_id": a["id"], "target_id": b["id"], "relation_type": "depends_on"}

    assert (
        agent.ok("memory-link", link)
        == agent.ok("memory-link", link)
        == "Memories linked successfully as 'depends_on'."
    )
    agent.ok("memory-link", {"source_id": b["id"], "target_id": c["id"]})
    agent.ok("memory-link", {"source_id": c["id"], "target_id": a["id"]})

    graph = agent.ok("memory-graph", {"seed_ids": [a["id"]], "max_hops": 5, "direction": "outgoing"})

    assert {node["id"]: node["hops"] for node in graph["nodes"]} == {a["id"]: 0, b["id"]: 1, c["id"]: 2}
    assert all("current_content" not in node and node["organization"] == "acme" for node in graph["nodes"])
    assert sorted((e["source"], e["target"], e["relation_type"]) for e in graph["edges"]) == sorted(
        [(a["id"], b["id"], "depends_on"), (b["id"], c["id"], "related"), (c["id"], a["id"], "related")]
    )
    assert graph["truncated"] is False
    only_depends = agent.ok("memory-graph", {"seed_ids": [a["id"]], "relation_types": ["depends_on"]})
    assert {node["id"] for node in only_depends["nodes"]} == {a["id"], b["id"]}


def test_memory_link_and_memory_graph_errors(agent: McpClient, reader: McpClient, write_memory: WriteMemory) -> None:
    a, b = write_memory(), write_memory(current_content="Another fact.")

    assert "cannot be linked to itself" in agent.error("memory-link", {"source_id": a["id"], "target_id": a["id"]})
    assert "needs the agent role" in reader.error("memory-link", {"source_id": a["id"], "target_id": b["id"]})
    unknown = "00000000-0000-4000-8000-000000000000"
    assert "none of the seed memories was found" in agent.error("memory-graph", {"seed_ids": [unknown]})
    message = agent.error("memory-graph", {"seed_ids": [a["id"]], "direction": "sideways"})
    assert "outgoing, incoming" in message


def test_kg_assert_and_kg_query(agent: McpClient, reader: McpClient) -> None:
    first = _assert(
        agent,
        "Alice",
        "works on",
        "Payments",
        valid_from="2025-01-01T00:00:00Z",
        confidence=0.9,
        provenance="ticket PAY-12",
    )
    _assert(agent, "alice", "works_on", "Search", valid_from="2025-06-01T00:00:00Z")

    assert first.keys() >= TRIPLE_KEYS
    assert (first["subject"], first["predicate"], first["object"], first["confidence"]) == (
        "Alice",
        "works_on",
        "Payments",
        0.9,
    )
    now = reader.ok("kg-query", {"subject": "ALICE"})
    assert now["subject"] == "Alice"
    assert [(t["object"], t["valid_to"]) for t in now["triples"]] == [("Search", None)]
    assert now["triples"][0].keys() >= TRIPLE_KEYS
    then = reader.ok("kg-query", {"subject": "Alice", "as_of": "2025-03-01T00:00:00Z"})
    (payments,) = then["triples"]
    assert payments["object"] == "Payments"
    assert payments["valid_from"].startswith("2025-01-01T00:00:00")
    assert payments["valid_to"].startswith("2025-06-01T00:00:00")
    assert payments["provenance"] == {"note": "ticket PAY-12"}
    # The timeline: one row per value and the period it held, the replaced value closed.
    timeline = reader.ok("kg-query", {"subject": "Alice", "include_history": True})
    assert [(t["object"], t["valid_from"][:10], (t["valid_to"] or "")[:10]) for t in timeline["triples"]] == [
        ("Payments", "2025-01-01", "2025-06-01"),
        ("Search", "2025-06-01", ""),
    ]
    records = reader.ok("kg-query", {"subject": "Alice", "include_records": True})
    assert [t["object"] for t in records["triples"]] == ["Payments", "Payments", "Search"]
    assert reader.ok("kg-query", {"subject": "Nobody"}) == {"subject": "Nobody", "triples": []}


def test_kg_assert_and_kg_query_errors(agent: McpClient, reader: McpClient) -> None:
    message = agent.error("kg-assert", {"subject": "Alice", "predicate": "works_on", "object": "X", "confidence": 1.5})
    assert "confidence" in message
    message = agent.error(
        "kg-assert", {"subject": "Alice", "predicate": "works_on", "object": "X", "valid_from": "soon"}
    )
    assert "ISO 8601" in message
    assert "needs the agent role" in reader.error("kg-assert", {"subject": "A", "predicate": "p", "object": "B"})
    assert "as_of must be an ISO 8601" in reader.error("kg-query", {"subject": "Alice", "as_of": "yesterday"})
    assert reader.ok("kg-query", {"subject": "Alice"})["triples"] == []


def test_kg_invalidate(agent: McpClient) -> None:
    fact = _assert(agent, "Alice", "works_on", "Payments", valid_from="2025-01-01T00:00:00Z")

    assert agent.ok("kg-invalidate", {"id": fact["id"], "reason": "Alice left"}) == (
        f"Fact {fact['id']} has been invalidated."
    )

    assert agent.ok("kg-query", {"subject": "Alice"})["triples"] == []
    history = agent.ok("kg-query", {"subject": "Alice", "include_records": True})["triples"]
    assert [(t["expired_at"] is None, t["invalidation_reason"]) for t in history] == [
        (False, None),
        (True, "Alice left"),
    ]
    again = agent.error("kg-invalidate", {"id": fact["id"], "reason": "Alice left"})
    assert f"fact {fact['id']} not found" in again
    bounded = history[1]["id"]
    assert "reason is required" in agent.error("kg-invalidate", {"id": bounded, "reason": " "})


def test_kg_related(agent: McpClient, reader: McpClient) -> None:
    _assert(agent, "Alice", "works_on", "Payments")
    _assert(agent, "Payments", "owned_by", "Finance")

    related = reader.ok("kg-related", {"entity": "payments"})
    deeper = reader.ok("kg-related", {"entity": "Alice", "depth": 2, "direction": "outgoing"})

    assert related["entity"] == "Payments"
    assert sorted((r["name"], r["hops"]) for r in related["related"]) == [("Alice", 1), ("Finance", 1)]
    assert all(fact.keys() >= TRIPLE_KEYS for fact in related["facts"])
    assert len(related["facts"]) == 2
    assert related["truncated"] is False
    assert [(r["name"], r["type"], r["hops"]) for r in deeper["related"]] == [
        ("Payments", None, 1),
        ("Finance", None, 2),
    ]
    assert "direction must be one of" in reader.error("kg-related", {"entity": "Alice", "direction": "up"})


def test_the_outsider_sees_and_touches_nothing(
    agent: McpClient, outsider: McpClient, write_memory: WriteMemory
) -> None:
    a, b = write_memory(), write_memory(current_content="Another fact.")
    agent.ok("memory-link", {"source_id": a["id"], "target_id": b["id"]})
    fact = _assert(agent, "Alice", "works_on", "Payments", valid_from="2025-01-01T00:00:00Z")

    assert "none of the seed memories was found" in outsider.error("memory-graph", {"seed_ids": [a["id"], b["id"]]})
    assert "not found" in outsider.error("memory-link", {"source_id": b["id"], "target_id": a["id"]})
    assert outsider.ok("kg-query", {"subject": "Alice", "include_records": True}) == {
        "subject": "Alice",
        "triples": [],
    }
    assert outsider.ok("kg-related", {"entity": "Payments", "depth": 4})["related"] == []
    assert "not found" in outsider.error("kg-invalidate", {"id": fact["id"], "reason": "not yours"})
    theirs = _assert(outsider, "Alice", "works_on", "Doom")

    assert theirs["id"] != fact["id"]
    assert [t["object"] for t in outsider.ok("kg-query", {"subject": "Alice"})["triples"]] == ["Doom"]
    assert [t["object"] for t in agent.ok("kg-query", {"subject": "Alice"})["triples"]] == ["Payments"]
    assert len(agent.ok("memory-get", {"id": a["id"]})["links"]) == 1


def test_kg_assert_says_which_facts_it_ended(agent: McpClient) -> None:
    first = _assert(agent, "Alice", "works_on", "Payments", valid_from="2025-01-01T00:00:00Z")
    assert first["ended"] == []

    moved = _assert(agent, "Alice", "works_on", "Checkout", valid_from="2025-06-01T00:00:00Z")
    again = _assert(agent, "Alice", "works_on", "Checkout", valid_from="2025-06-01T00:00:00Z")

    [ended] = moved["ended"]
    assert (ended["object"], ended["valid_from"], ended["valid_to"]) == (
        "Payments", "2025-01-01T00:00:00Z", "2025-06-01T00:00:00Z",
    )  # fmt: skip
    assert ended["id"] != first["id"]  # the record of the period it held; the open one expired
    assert again["ended"] == [] and again["id"] == moved["id"]  # already believed: nothing ended


def test_kg_related_and_memory_get_show_what_memories_mention(
    agent: McpClient, reader: McpClient, write_memory: WriteMemory
) -> None:
    _assert(agent, "Payments", "owned_by", "Finance")
    agent.ok("memory-write", {"organization": "acme", "scope_type": "organization", "memory_type": "fact",
                              "current_content": "Alice reviews every change to Payments."})  # fmt: skip
    said = write_memory(current_content="Payments settles in integer cents; ask Finance before changing it.")

    related = reader.ok("kg-related", {"entity": "payments"})
    got = reader.ok("memory-get", {"id": said["id"]})

    assert related["memories_total"] == 2
    assert {m["id"] for m in related["memories"]} >= {said["id"]}
    assert set(related["memories"][0]) >= {"id", "title", "memory_type", "status", "importance", "author", "review"}
    assert "current_content" not in related["memories"][0]
    assert related["memories"][0]["author"]["kind"] == "agent"
    assert related["mentioned_with"] == [{"name": "Alice", "memories": 1}, {"name": "Finance", "memories": 1}]
    assert got["mentions"] == [
        {"name": "Payments", "kind": "alias", "entity": "Payments"},
        {"name": "Finance", "kind": "alias", "entity": "Finance"},
    ]
    nobody = reader.ok("kg-related", {"entity": "Nobody"})
    assert (nobody["memories"], nobody["memories_total"], nobody["mentioned_with"]) == ([], 0, [])


def test_memory_write_suggests_the_tags_of_memories_that_name_the_same(write_memory: WriteMemory) -> None:
    write_memory(current_content="Adyen webhooks are retried for three days.", tags=["billing"])

    written = write_memory(current_content="Adyen refunds need a curator's approval.")

    assert written["suggested_tags"] == ["billing"]


def test_memory_search_filters_by_what_memories_mention(agent: McpClient, write_memory: WriteMemory) -> None:
    said = write_memory(current_content="Adyen settles refunds within five days.", status="active")
    write_memory(current_content="Refunds by bank transfer settle within ten days.", status="active")

    found = agent.ok("memory-search", {"query": "when do refunds settle", "filters": {"mentions": "adyen"}})

    assert [hit["id"] for hit in found] == [said["id"]]
    assert "filters.mentions must be a name" in agent.error("memory-search", {"query": "x", "filters": {"mentions": 3}})
