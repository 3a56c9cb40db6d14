"""A superseded memory is not changed: the refusal names the memory that replaced it."""

from __future__ import annotations

import pytest

from memories.decisions import memory_invalidate
from memories.models import Memory
from memories.services import memory_create
from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.rest_api.conftest import API, client_with, error_of

pytestmark = pytest.mark.django_db


def test_updating_a_superseded_memory_names_its_survivor(acme: Tenant, agent: McpClient) -> None:
    data = {"scope_type": "organization", "memory_type": "fact", "current_content": "CI runs on Jenkins."}
    old, _ = memory_create(principal=acme.agent, data=data)
    new, _ = memory_create(principal=acme.agent, data={**data, "current_content": "CI runs on GitHub Actions."})
    memory_invalidate(principal=acme.agent, memory_id=old.pk, reason="migrated", superseded_by=new.pk)

    over_mcp = agent.error("memory-update", {"id": str(old.pk), "current_content": "CI runs on Buildkite."})
    over_rest = error_of(
        client_with(acme.raw_tokens["curator"]).patch(f"{API}/memories/{old.pk}/", {"importance": 3}), 409
    )

    assert f"superseded by memory {new.pk}" in over_mcp
    assert over_rest["details"]["superseded_by"] == str(new.pk)
    stored = Memory.objects.get(pk=old.pk)
    assert (stored.current_content, stored.version) == ("CI runs on Jenkins.", 2)
