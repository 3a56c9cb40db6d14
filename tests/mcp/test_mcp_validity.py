"""memory-search, memory-list and memory://index follow validity windows; valid_at and include_expired."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.conftest import MemoryFactory
from tests.mcp.client import McpClient
from tests.mcp.conftest import WriteMemory

pytestmark = pytest.mark.django_db


def test_expired_memories_leave_default_reads_and_come_back_when_asked(
    agent: McpClient, write_memory: WriteMemory, make_memory: MemoryFactory
) -> None:
    past = timezone.now() - timedelta(days=1)
    expired = {"id": str(make_memory(
        current_content="Deploy freezes start on the 20th of December.",
        valid_from=(past - timedelta(days=300)).isoformat(),
        valid_until=past.isoformat(),
    ).pk)}  # fmt: skip
    current = write_memory(current_content="Deploy freezes start on the 15th of December.")
    last_week = (past - timedelta(days=5)).isoformat()

    searched = [m["id"] for m in agent.ok("memory-search", {"query": "deploy freeze december"})]
    listed = [m["id"] for m in agent.ok("memory-list", {})["memories"]]
    index = [m["id"] for m in json.loads(agent.read_resource("memory://index"))]
    then = [m["id"] for m in agent.ok("memory-search", {"query": "deploy freeze", "valid_at": last_week})]
    everything = [m["id"] for m in agent.ok("memory-list", {"include_expired": True})["memories"]]

    assert expired["id"] not in searched + listed + index
    assert current["id"] in searched and current["id"] in listed and current["id"] in index
    assert expired["id"] in then and current["id"] in then  # the current one has no start: valid then too
    assert {expired["id"], current["id"]} <= set(everything)
    assert "valid_at must be an ISO 8601" in agent.error("memory-list", {"valid_at": "yesterday"})
