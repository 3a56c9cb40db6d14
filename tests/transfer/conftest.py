"""What the export and import tests share: an organization with every kind of row, files made of it."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from knowledge.services import entity_add_alias
from memories.services import memory_update
from organizations.models import Organization
from tests.conftest import MemoryFactory, Tenant
from tests.rest_api.conftest import World, own_world, proposals, world  # noqa: F401 - the fixtures
from transfer.export import export_organization


def export_lines(slug: str, *, embeddings: bool = True) -> list[dict[str, Any]]:
    out = io.StringIO()
    export_organization(Organization.objects.get(slug=slug), out, embeddings=embeddings)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def write_lines(lines: list[dict[str, Any]], path: Path) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.fixture
def rich(acme: Tenant, proposals: World, make_memory: MemoryFactory) -> World:  # noqa: F811 - the fixture
    """acme with every kind of row: the REST world and its proposals, a personal memory, an edited
    one (two versions), an entity alias."""
    make_memory(principal=acme.person, scope_type="user", current_content="I prefer short answers.")
    memory_update(
        principal=acme.agent, memory_id=proposals.other.pk, data={"current_content": "Refunds use the ledger."}
    )
    entity_add_alias(principal=acme.agent, entity_name="payments-api", alias="payments")
    return proposals
