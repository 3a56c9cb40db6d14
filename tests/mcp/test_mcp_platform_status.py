from __future__ import annotations

import pytest

from memory_platform import heartbeat
from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.mcp.conftest import Connect, WriteMemory

pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]


def test_status_names_the_organization_role_and_embedding_state(agent: McpClient, write_memory: WriteMemory) -> None:
    write_memory(status="active")
    write_memory()
    heartbeat.beat(), heartbeat.beat(heartbeat.BEAT)  # a worker and beat are alive

    status = agent.ok("platform-status", {})

    assert status["organization"] == "acme"
    assert status["role"] == "agent"
    assert status["status"] == "ok"
    assert status["database"]["ok"] is True
    assert status["database"]["pgvector"]
    embedding = status["embedding"]
    assert embedding["state"] in {"idle", "loading", "ready"}
    assert embedding["model"] == "all-MiniLM-L6-v2"
    assert embedding["dimensions"] == 384
    assert embedding["pending_memories"] == 0
    assert status["memories"]["total"] == 2
    assert status["memories"]["by_status"] == {"active": 1, "draft": 1}


def test_status_reports_the_role_of_the_token(acme: Tenant, connect: Connect) -> None:
    for role in ("reader", "curator", "admin"):
        assert connect(acme.raw_tokens[role]).ok("platform-status", {})["role"] == role
