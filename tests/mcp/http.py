"""Plain HTTP against /mcp, for what the MCP client never sends (wrong methods, bad bodies, no token)."""

from __future__ import annotations

import json
from typing import Any

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "tests", "version": "1"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def bearer(token: str) -> dict[str, str]:
    return MCP_HEADERS | {"Authorization": f"Bearer {token}"}


def body(message: dict[str, Any] | None = None) -> bytes:
    return json.dumps(message or INITIALIZE).encode()
