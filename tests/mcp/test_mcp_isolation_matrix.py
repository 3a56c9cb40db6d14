"""Tenant isolation over MCP, generated from the live surface of a running server.

What the server lists on the wire (tools/list, resources/list, resources/templates/list,
prompts/list) is called by a token of every role of globex, by a globex person, and by an MCP host
signed in with OAuth for a globex person: every tool with
acme's objects wherever its schema takes one (memory ids, fact ids, entity names, repository
slugs, proposal ids), every resource and template (with acme's ids), every prompt. Nothing of
acme's is shown, nothing of acme's changes, no call fails inside; a new tool, resource or prompt is
covered without anyone writing a test for it. How many calls went out is recorded in
test-artifacts/hardening.json.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from knowledge.links import link_create
from knowledge.models import Entity, MemoryLink, Triple
from knowledge.services import triple_assert
from lifecycle.models import ConsolidationProposal
from lifecycle.services import proposal_create
from memories.models import Memory
from organizations.models import AuditEvent, Role
from organizations.services import repository_get_or_create
from tests.artifacts import record
from tests.conftest import MemoryFactory, Tenant
from tests.mcp.conftest import Connect
from tests.oauth import oauth_access_token

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.mcp_live]

# What only acme's objects hold (the matrix sends their ids and names, which may be echoed back).
SECRETS = ("thursday", "payroll team", "payroll timing")
# Arguments that name a memory (one, or a list of them).
ONE_ID = {"id", "memory_id", "source_id", "target_id", "superseded_by", "survivor_id", "successor_id"}
MANY_IDS = {"ids", "memory_ids", "seed_ids"}
PLAIN = {"string": "deploys", "integer": 1, "boolean": False, "array": []}


class Acme:
    """The acme objects the matrix aims at, and what each kind of argument gets of them."""

    def __init__(self, tenant: Tenant, make_memory: MemoryFactory) -> None:
        first = make_memory(title="Acme payroll runs on Thursdays", current_content="Acme payroll runs on Thursdays.")
        second = make_memory(title="Acme payroll timing", current_content="Acme payroll runs every Thursday.")
        self.memory_ids = [str(first.pk), str(second.pk)]
        link_create(principal=tenant.agent, source_id=first.pk, target_id=second.pk)
        self.fact, _ = triple_assert(
            principal=tenant.agent, subject="payroll-service", predicate="owned_by", object="Payroll team"
        )
        self.repository = repository_get_or_create(principal=tenant.admin, slug="payroll").slug
        proposal, _ = proposal_create(
            organization_id=tenant.organization.pk, kind="merge", memory_ids=[first.pk, second.pk], created_by="tests"
        )
        assert proposal is not None
        self.proposal = str(proposal.pk)

    def value(self, tool: str, name: str, schema: dict[str, Any]) -> Any:
        """acme's object where the argument names one, else a plain value the schema accepts."""
        if tool.startswith("kg-") and name == "id":
            return self.fact.pk
        named: dict[str, Any] = {
            "subject": "payroll-service",
            "entity": "payroll-service",
            "repository": self.repository,
            "proposal_id": self.proposal,
            "query": "When does payroll run?",
            "filters": {"repository": self.repository},
        }
        if name in named:
            return named[name]
        if name in ONE_ID or name in MANY_IDS:
            return self.memory_ids[0] if name in ONE_ID else self.memory_ids
        if "enum" in schema:
            return schema["enum"][0]
        kinds = [option.get("type") for option in schema.get("anyOf", [schema])]
        kind = next((kind for kind in PLAIN if kind in kinds), None)
        if kind == "integer":
            return schema.get("minimum", 1)
        return PLAIN[kind] if kind is not None else {}

    def arguments(self, tool: str, schema: dict[str, Any]) -> dict[str, Any]:
        properties: dict[str, Any] = schema.get("properties", {})
        named = {"subject", "entity", "repository", "proposal_id", "query", "filters"} | ONE_ID | MANY_IDS
        wanted = set(schema.get("required", [])) | (set(properties) & named)
        return {name: self.value(tool, name, properties[name]) for name in sorted(wanted)}


def _acme_state() -> tuple[Any, ...]:
    return (
        sorted(Memory.objects.filter(organization__slug="acme").values_list("pk", "version", "status", "deleted_at")),
        sorted(MemoryLink.objects.values_list("pk", "removed_at")),
        sorted(Triple.objects.values_list("pk", "expired_at")),
        Entity.objects.filter(organization__slug="acme").count(),
        AuditEvent.objects.filter(organization__slug="acme").count(),
        sorted(ConsolidationProposal.objects.values_list("pk", "state")),
    )


def _surface(client: Any) -> tuple[list[Any], list[str], list[str], list[str]]:
    """What the server lists on the wire: tools, resources, resource templates, prompts."""

    async def listed(session: Client) -> tuple[list[Any], list[str], list[str], list[str]]:
        tools = (await session.list_tools()).tools
        resources = [str(resource.uri) for resource in (await session.list_resources()).resources]
        templates = [template.uri_template for template in (await session.list_resource_templates()).resource_templates]
        prompts = [prompt.name for prompt in (await session.list_prompts()).prompts]
        return tools, resources, templates, prompts

    result: tuple[list[Any], list[str], list[str], list[str]] = client.run(listed)
    return result


@pytest.mark.parametrize("who", [*Role.values, "person", "oauth"])
def test_no_principal_of_another_organization_reaches_acme_over_mcp(
    acme: Tenant, globex: Tenant, make_memory: MemoryFactory, who: str, *, connect: Connect, endpoint: str
) -> None:
    objects = Acme(acme, make_memory)
    if who == "oauth":
        assert globex.person.user is not None
        raw = oauth_access_token(globex.person.user, organization="globex", role=Role.AGENT, resource=endpoint)
    else:
        raw = globex.raw_tokens[who]
    client = connect(raw)
    tools, resources, templates, prompts = _surface(client)
    assert len(tools) >= 18 and resources and templates and prompts
    before = _acme_state()
    calls = 0

    for tool in tools:
        result = client.call(tool.name, objects.arguments(tool.name, tool.input_schema))
        calls += 1
        assert not any(secret in result.text.lower() for secret in SECRETS), (tool.name, result.text[:300])
        assert "internal error" not in result.text and "Traceback" not in result.text, (tool.name, result.text[:300])
    for uri in resources:
        text = client.read_resource(uri).lower()
        assert not any(secret in text for secret in SECRETS), uri
        calls += 1
    for template in templates:
        message = client.read_resource_error(template.replace("{id}", objects.memory_ids[0]))
        assert not any(secret in message.lower() for secret in SECRETS)
        calls += 1
    for prompt in prompts:
        text = client.get_prompt(prompt).lower()
        assert not any(secret in text for secret in SECRETS), prompt
        calls += 1

    assert _acme_state() == before, "something of acme's changed"
    record("hardening", f"isolation: MCP calls as globex {who} (live server)", calls)
