"""Bodies no JSON-RPC server should choke on, over HTTP and stdio: every one gets a JSON-RPC error
answer saying what to send, nothing is written, and the server goes on answering."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable

import httpx
import pytest

from memories.models import Memory
from tests.conftest import Tenant
from tests.mcp.http import bearer
from tests.mcp.stdio import INITIALIZE, handshake, read_message, send, tool_call

pytestmark = pytest.mark.django_db(transaction=True)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
DEEP = b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": ' + b"[" * 5_000 + b"]" * 5_000 + b"}"
SURROGATE_ID = json.dumps(tool_call(6, "memory-delete", {"id": "\ud800"})).encode()
SURROGATE_QUERY = json.dumps(tool_call(7, "memory-recall", {"query": "deploys \udfff"})).encode()


@pytest.mark.parametrize(("body", "said"), [(DEEP, "nested more than"), (SURROGATE_ID, "at params.arguments.id")])
def test_http_answers_a_parse_error_saying_what_to_fix(mcp_url: str, acme: Tenant, body: bytes, said: str) -> None:
    response = httpx.post(mcp_url, headers=bearer(acme.raw_tokens["agent"]), content=body, timeout=30)

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == PARSE_ERROR and said in error["message"]


def test_stdio_answers_every_line_and_carries_on(
    acme: Tenant, stdio_env: Callable[..., dict[str, str]], spawn_stdio: Callable[..., subprocess.Popen[bytes]]
) -> None:
    process = spawn_stdio(stdio_env(acme.raw_tokens["agent"]))
    handshake(process)
    assert process.stdin is not None

    for line, code in (
        (b"{not json", PARSE_ERROR),
        (DEEP, PARSE_ERROR),
        (SURROGATE_ID, PARSE_ERROR),
        (SURROGATE_QUERY, PARSE_ERROR),
        (b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": "x"}', INVALID_REQUEST),
    ):
        process.stdin.write(line + b"\n")
        process.stdin.flush()
        answer = read_message(process)
        assert answer["error"]["code"] == code, (line[:60], answer)
        assert "Traceback" not in answer["error"]["message"]

    send(process, tool_call(9, "memory-list", {}))
    answer = read_message(process)
    assert answer["id"] == 9 and "result" in answer
    assert Memory.objects.count() == 0


@pytest.mark.parametrize(
    "first_line",
    [
        DEEP,
        b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": "x"}',
        b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "initialize", "params": {}}',
    ],
)
def test_a_malformed_first_line_is_answered_and_the_session_goes_on(
    acme: Tenant,
    stdio_env: Callable[..., dict[str, str]],
    spawn_stdio: Callable[..., subprocess.Popen[bytes]],
    first_line: bytes,
) -> None:
    process = spawn_stdio(stdio_env(acme.raw_tokens["agent"]))
    assert process.stdin is not None
    process.stdin.write(first_line + b"\n")
    process.stdin.flush()

    answer = read_message(process)
    assert answer["error"]["code"] in (PARSE_ERROR, INVALID_REQUEST)
    send(process, INITIALIZE)
    assert read_message(process)["result"]["serverInfo"]["name"] == "Memory MCP Server"
    assert process.poll() is None


NAMELESS_CALL = {"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"arguments": {}}}
SAID = "invalid parameters for tools/call (params.name: missing)"


def test_http_says_which_parameter_a_request_lacks(mcp_url: str, acme: Tenant) -> None:
    response = httpx.post(mcp_url, headers=bearer(acme.raw_tokens["agent"]), json=NAMELESS_CALL, timeout=30)

    assert response.status_code == 200
    assert response.json() == {"jsonrpc": "2.0", "id": 11, "error": {"code": -32602, "message": SAID}}


def test_stdio_says_which_parameter_a_request_lacks_and_logs_nothing(
    acme: Tenant, stdio_env: Callable[..., dict[str, str]], spawn_stdio: Callable[..., subprocess.Popen[bytes]]
) -> None:
    """Each such request once logged every request type's validation error (kilobytes on stderr,
    which filled the pipe of a client that did not read it and froze the session)."""
    process = spawn_stdio(stdio_env(acme.raw_tokens["agent"]))
    handshake(process)

    for n in range(100):
        send(process, {**NAMELESS_CALL, "id": 100 + n})
        assert read_message(process) == {"jsonrpc": "2.0", "id": 100 + n, "error": {"code": -32602, "message": SAID}}
    _, stderr = process.communicate(timeout=60)
    assert b"validation error" not in stderr
