from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from mcp import Client

from instructions.models import InstructionKey, InstructionText
from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.mcp.conftest import Connect

pytestmark = pytest.mark.django_db

PROMPTS = ["memory-agent-core", "memory-index-policy", "tool-usage-guidelines"]


def default_text(key: str) -> str:
    return (Path(settings.BASE_DIR) / "templates" / "mcp" / f"{key}.md").read_text()


def test_the_three_prompts_are_listed(agent: McpClient) -> None:
    async def prompts(session: Client) -> list[str]:
        return [prompt.name for prompt in (await session.list_prompts()).prompts]

    assert set(PROMPTS) <= set(agent.run(prompts))


def test_each_prompt_is_the_shipped_text_by_default(agent: McpClient) -> None:
    for name in PROMPTS:
        text = agent.get_prompt(name)

        assert text == default_text(name)
        assert len(text.splitlines()) > 5, name


def test_an_organization_override_replaces_the_prompt_for_that_organization_only(
    acme: Tenant, globex: Tenant, connect: Connect
) -> None:
    override = "ACME agents: search first, write one concept per memory, and never store customer data."
    InstructionText.objects.create(organization=acme.organization, key=InstructionKey.AGENT_CORE, text=override)

    assert connect(acme.raw_tokens["reader"]).get_prompt("memory-agent-core") == override
    assert connect(globex.raw_tokens["reader"]).get_prompt("memory-agent-core") == default_text("memory-agent-core")


def test_an_organization_override_replaces_a_doc_for_that_organization_only(
    acme: Tenant, globex: Tenant, connect: Connect
) -> None:
    override = "# ACME memory rules\n\nOnly curators may write business rules.\n"
    InstructionText.objects.create(organization=acme.organization, key=InstructionKey.MEMORY_RULES, text=override)

    assert connect(acme.raw_tokens["agent"]).read_resource("docs://memory-rules") == override
    assert connect(globex.raw_tokens["agent"]).read_resource("docs://memory-rules") == default_text("memory-rules")
    assert connect(acme.raw_tokens["agent"]).get_prompt("memory-agent-core") == default_text("memory-agent-core")
