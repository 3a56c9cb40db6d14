"""Resources (memory://index, memory://{id}, docs://…) and prompts."""

from __future__ import annotations

import json

from instructions.models import InstructionKey
from instructions.selectors import instruction_text
from mcp_api.payloads import memory_index_payload, memory_payload
from mcp_api.server import prompt, resource
from memories import selectors
from organizations.principal import Principal

INDEX_SIZE = 50


@resource(
    "memory://index",
    name="memory-index",
    description=(
        "The 50 most recently changed memories you can see that are in force now (not deprecated or superseded), "
        "as lightweight entries without content, each with its author and review state."
    ),
)
def memory_index(principal: Principal) -> str:
    return json.dumps([memory_index_payload(memory) for memory in selectors.memory_index(principal, limit=INDEX_SIZE)])


@resource("memory://{id}", name="memory", description="One memory in full, by id.")
def memory_by_id(principal: Principal, id: str) -> str:
    return json.dumps(memory_payload(selectors.memory_get(principal, id)))


def _doc(key: InstructionKey, uri: str, description: str) -> None:
    @resource(uri, name=key.value, description=description, mime_type="text/markdown")
    def read(principal: Principal) -> str:
        return instruction_text(principal.organization, key)


_doc(InstructionKey.MCP_OVERVIEW, "docs://mcp-overview", "What this server is and how memories work.")
_doc(InstructionKey.TOOLS_GUIDE, "docs://tools-guide", "Every tool: what it does and its key arguments.")
_doc(InstructionKey.MEMORY_RULES, "docs://memory-rules", "Rules to follow before writing a memory.")


def _prompt(key: InstructionKey, description: str) -> None:
    @prompt(key.value, description=description)
    def render(principal: Principal) -> str:
        return instruction_text(principal.organization, key)


_prompt(InstructionKey.AGENT_CORE, "Core behaviour for an agent using this memory: atomic, search first, scopes.")
_prompt(InstructionKey.INDEX_POLICY, "How the memory index works and how to keep titles and metadata small.")
_prompt(InstructionKey.TOOL_GUIDELINES, "When to use (and not use) each memory tool.")
