"""The stdio handshake fast path.

Agents spawn `manage.py mcp_stdio` and give up if ``initialize`` is not answered quickly, but
loading Django and the MCP library takes most of a second (more on a busy machine). So
manage.py calls :func:`early_handshake` first: with the standard library only, it reads the
first message and, if it is ``initialize``, answers it at once. The full server then starts,
receives that same message (so its session state is right) and its duplicate answer is dropped.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from mcp_api.identity import initialize_result

# Lines read before the server started, to hand to it, and the id whose answer was already sent.
pending_lines: list[bytes] = []
answered_id: Any = None


def early_handshake() -> None:
    global answered_id  # noqa: PLW0603 - handed from manage.py to the command in one process
    line = sys.stdin.buffer.readline()
    if not line:
        return
    pending_lines.append(line)
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return  # the server reads the line again and answers it with a JSON-RPC error
    if not isinstance(message, dict) or message.get("method") != "initialize" or "id" not in message:
        return
    params = message.get("params") or {}
    if not isinstance(params, dict) or not isinstance(message["id"], str | int):
        return  # likewise: not a request this fast path answers
    response = {"jsonrpc": "2.0", "id": message["id"], "result": initialize_result(params.get("protocolVersion"))}
    sys.stdout.buffer.write(json.dumps(response, separators=(",", ":")).encode() + b"\n")
    sys.stdout.buffer.flush()
    answered_id = message["id"]
