"""Talking to a ``manage.py mcp_stdio`` process directly, one JSON-RPC line at a time."""

from __future__ import annotations

import json
import select
import subprocess
import time
from typing import Any

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "tests", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def send(process: subprocess.Popen[bytes], *messages: dict[str, Any]) -> None:
    assert process.stdin is not None
    for message in messages:
        process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def read_message(process: subprocess.Popen[bytes], timeout: float = 60) -> dict[str, Any]:
    """The next line on the process's stdout, parsed; fails if none comes within ``timeout``."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    remaining = timeout
    while remaining > 0:
        ready, _, _ = select.select([process.stdout], [], [], remaining)
        if ready:
            line = process.stdout.readline()
            assert line, f"stdout closed (exit {process.poll()}) before a message came"
            message: dict[str, Any] = json.loads(line)
            return message
        remaining = deadline - time.monotonic()
    process.kill()  # to say why: what it logged
    _, stderr = process.communicate(timeout=30)
    tail = (stderr or b"").decode(errors="replace")[-3000:]
    raise AssertionError(f"no message on stdout within {timeout:.0f} s; the process logged:\n{tail}")


def tool_call(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def handshake(process: subprocess.Popen[bytes]) -> None:
    """initialize, its answer, then initialized: the session is ready for requests."""
    send(process, INITIALIZE)
    answer = read_message(process)
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "Memory MCP Server", answer
    send(process, INITIALIZED)
