"""Knowledge fixtures: linking helpers, fixed instants for valid time, and the live MCP server.

The MCP tests reuse the real server of ``tests/mcp`` (the web server on the test database, the official
client) and the admin tests the staff fixtures of ``tests/admin``; both are imported here so this
package sees them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from knowledge.links import link_create
from knowledge.models import MemoryLink
from memories.models import Memory
from organizations.principal import Principal
from tests.admin.conftest import client_as, login, make_staff  # noqa: F401  (fixtures, found by name)
from tests.conftest import MemoryFactory, Tenant
from tests.mcp.conftest import (  # noqa: F401  (fixtures, found by name)
    agent,
    connect,
    curator,
    endpoint,
    outsider,
    write_memory,
)

Link = Callable[..., MemoryLink]
Chain = Callable[[int], list[Memory]]


def at(month: int, day: int = 1, hour: int = 0) -> datetime:
    """An instant of 2025 in UTC: valid times in these tests are fixed (and past), never 'now'."""
    return datetime(2025, month, day, hour, tzinfo=UTC)


@pytest.fixture
def link(acme: Tenant) -> Link:
    """``link(a, b, "depends_on")``: link two memories as acme's agent (or ``principal``)."""

    def make(source: Memory, target: Memory, relation_type: str = "related", principal: Principal | None = None) -> Any:
        return link_create(
            principal=principal or acme.agent, source_id=source.id, target_id=target.id, relation_type=relation_type
        )[0]

    return make


@pytest.fixture
def chain(make_memory: MemoryFactory, link: Link) -> Chain:
    """``chain(n)``: n memories linked first → second → … → last."""

    def build(length: int) -> list[Memory]:
        memories = [make_memory(current_content=f"Step {n} of the release checklist.") for n in range(length)]
        for source, target in itertools.pairwise(memories):
            link(source, target)
        return memories

    return build
