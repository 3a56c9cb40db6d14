"""A stdio session whose token does not work says so to the client, in JSON-RPC, on every request.

Exiting at once would show the client only a dropped connection: the session answers the handshake
(it must come within a second, before Django has even loaded), then refuses each request with
-32001 and the reason, which clients show to their user; at the end of input it exits non-zero
with the reason on stderr too.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Tenant
from tests.mcp.stdio import INITIALIZE, INITIALIZED, read_message, send, tool_call

pytestmark = pytest.mark.django_db(transaction=True)

Spawn = Callable[..., subprocess.Popen[bytes]]
UNKNOWN_TOKEN = "mp_deadbeef_0000000000000000000000000000000000"


def finish(process: subprocess.Popen[bytes]) -> tuple[int, bytes, str]:
    """Close stdin, wait for the exit; return its status, the rest of stdout and stderr."""
    stdout, stderr = process.communicate(timeout=60)
    return process.returncode, stdout, stderr.decode()


def _refused_session(process: subprocess.Popen[bytes], reason: str) -> str:
    """Handshake, then a tool call and a list, each refused with ``reason``; returns stderr."""
    send(process, INITIALIZE)
    assert read_message(process)["result"]["serverInfo"]["name"] == "Memory MCP Server"
    send(process, INITIALIZED, tool_call(2, "memory-list", {}), {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    for request_id in (2, 3):
        answer = read_message(process)
        assert answer["id"] == request_id
        assert answer["error"]["code"] == -32001
        assert reason in answer["error"]["message"]
    send(process, {"jsonrpc": "2.0", "id": 4, "method": "ping"})
    assert read_message(process) == {"jsonrpc": "2.0", "id": 4, "result": {}}
    code, rest, stderr = finish(process)
    assert code != 0
    assert rest == b""
    assert reason in stderr and "Traceback" not in stderr
    assert "embedding model" not in stderr, "a session that can never serve loaded the model"
    return stderr


@pytest.mark.parametrize(
    ("token", "reason"),
    [(UNKNOWN_TOKEN, "invalid token"), ("hunter2", "malformed token"), ("", "set MEMORY_PLATFORM_TOKEN")],
    ids=["unknown", "malformed", "none"],
)
def test_every_request_is_refused_with_the_reason(
    acme: Tenant, stdio_env: Callable[..., dict[str, str]], spawn_stdio: Spawn, token: str, reason: str
) -> None:
    _refused_session(spawn_stdio(stdio_env(token or None)), reason)


def test_an_unreadable_token_file_is_explained(
    stdio_env: Callable[..., dict[str, str]], spawn_stdio: Spawn, tmp_path: Path
) -> None:
    _refused_session(spawn_stdio(stdio_env(), "--token-file", str(tmp_path / "absent")), "--token-file")


def test_without_any_input_nothing_is_written_on_stdout(
    stdio_env: Callable[..., dict[str, str]], spawn_stdio: Spawn
) -> None:
    code, stdout, stderr = finish(spawn_stdio(stdio_env("hunter2")))

    assert code != 0
    assert "malformed token" in stderr and "Traceback" not in stderr
    assert stdout == b""
