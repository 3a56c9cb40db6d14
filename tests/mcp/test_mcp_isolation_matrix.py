"""Tenant isolation over MCP, generated from the live surface: every tool of tools/list, called by
every role of globex with acme's ids wherever its schema takes an id, every resource template
with acme's ids, and every prompt. Nothing of acme's is shown, nothing of acme's changes; a new
tool or resource is covered without anyone writing a test for it."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.models import MemoryLink, Triple
from lifecycle.models import ConsolidationProposal
from lifecycle.services import proposal_create
from mcp_api.server import get_server
from memories.models import Memory
from organizations.models import AuditEvent, Role
from tests.conftest import MemoryFactory, Tenant
from tests.mcp.conftest import Connect

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.mcp_live]

SERVER = get_server()
TOOLS = {tool.name: tool.parameters for tool in SERVER._tool_manager.list_tools()}
# Arguments that name a memory (one, or a list of them).
ONE_ID = {"id", "memory_id", "source_id", "target_id", "superseded_by", "survivor_id", "successor_id"}
MANY_IDS = {"ids", "memory_ids", "seed_ids"}


PLAIN = {"string": "deploys", "integer": 1, "boolean": False, "array": []}


def _value(name: str, schema: dict[str, Any], acme_ids: list[str]) -> Any:
    """An acme id where the argument names a memory, else a plain value the schema accepts."""
    if name in ONE_ID or name in MANY_IDS:
        return acme_ids[0] if name in ONE_ID else acme_ids
    if "enum" in schema:
        return schema["enum"][0]
    kinds = [option.get("type") for option in schema.get("anyOf", [schema])]
    kind = next((kind for kind in PLAIN if kind in kinds), None)
    if kind == "integer":
        return schema.get("minimum", 1)
    return PLAIN[kind] if kind is not None else {}


def _arguments(schema: dict[str, Any], acme_ids: list[str]) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties", {})
    wanted = set(schema.get("required", [])) | (set(properties) & (ONE_ID | MANY_IDS))
    return {name: _value(name, properties[name], acme_ids) for name in sorted(wanted)}


def _acme_state() -> tuple[Any, ...]:
    return (
        sorted(Memory.objects.filter(organization__slug="acme").values_list("pk", "version", "status", "deleted_at")),
        sorted(MemoryLink.objects.values_list("pk", "removed_at")),
        sorted(Triple.objects.values_list("pk", "expired_at")),
        AuditEvent.objects.filter(organization__slug="acme").count(),
        sorted(ConsolidationProposal.objects.values_list("pk", "state")),
    )


def test_every_tool_takes_some_argument_the_matrix_fills() -> None:
    named = [name for name, schema in TOOLS.items() if set(schema.get("properties", {})) & (ONE_ID | MANY_IDS)]
    assert len(named) >= 8, named


@pytest.mark.parametrize("role", Role.values)
def test_no_role_of_another_organization_reaches_acme_over_mcp(
    acme: Tenant, globex: Tenant, make_memory: MemoryFactory, connect: Connect, role: str
) -> None:
    first = make_memory(title="Acme payroll runs on Thursdays", current_content="Acme payroll runs on Thursdays.")
    second = make_memory(title="Acme payroll timing", current_content="Acme payroll runs every Thursday.")
    proposal_create(
        organization_id=acme.organization.pk, kind="merge", memory_ids=[first.pk, second.pk], created_by="tests"
    )
    acme_ids = [str(first.pk), str(second.pk)]
    client = connect(globex.raw_tokens[role])
    before = _acme_state()

    for name, schema in TOOLS.items():
        result = client.call(name, _arguments(schema, acme_ids))
        assert "payroll" not in result.text.lower(), (name, result.text[:300])
        assert "Traceback" not in result.text
    for template in SERVER._resource_manager._templates:
        message = client.read_resource_error(template.replace("{id}", acme_ids[0]))
        assert "payroll" not in message.lower()
    for prompt in SERVER._prompt_manager.list_prompts():
        assert "payroll" not in client.get_prompt(prompt.name).lower()

    assert _acme_state() == before, "something of acme's changed"
