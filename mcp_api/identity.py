"""What the server says about itself at the handshake. Standard library only: the stdio fast
path answers ``initialize`` from this before Django and the MCP library are even imported."""

from __future__ import annotations

from typing import Any

SERVER_NAME = "Memory MCP Server"
SERVER_VERSION = "1.0.0"  # the contract's manifest version
SERVER_INSTRUCTIONS = (
    "Shared, governed memory for your organization: business rules, decisions, conventions, facts "
    "and preferences. Search before you write (memory-search), store one concept per memory "
    "(memory-write), and read docs://memory-rules before writing. Start a task with memory-recall "
    "to load the rules that apply. Your bearer token decides your organization and role; "
    "platform-status tells you both."
)
# The revisions a client reaches with ``initialize`` (2026-07-28 clients use server/discover instead);
# tests/mcp/test_sdk_seam.py keeps this list and the answer below equal to the SDK's.
SUPPORTED_PROTOCOL_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"subscribe": False, "listChanged": False},
    "tools": {"listChanged": False},
}


def initialize_result(requested_version: Any) -> dict[str, Any]:
    """The result the server gives to ``initialize``, as the MCP SDK builds it."""
    version = requested_version if requested_version in SUPPORTED_PROTOCOL_VERSIONS else SUPPORTED_PROTOCOL_VERSIONS[-1]
    return {
        "protocolVersion": version,
        "capabilities": CAPABILITIES,
        "serverInfo": {"name": SERVER_NAME, "version": SERVER_VERSION},
        "instructions": SERVER_INSTRUCTIONS,
    }
