from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Callable

import pytest

from tests.conftest import Tenant
from tests.mcp.stdio import INITIALIZE, INITIALIZED, read_message, send, tool_call

pytestmark = pytest.mark.django_db(transaction=True)

Spawn = Callable[..., subprocess.Popen[bytes]]


@pytest.fixture
def initialized(acme: Tenant, stdio_env: Callable[..., dict[str, str]], spawn_stdio: Spawn) -> subprocess.Popen[bytes]:
    """A stdio server past the handshake, idle, with logs at INFO (they must go to stderr)."""
    process = spawn_stdio(stdio_env(acme.raw_tokens["agent"], LOG_LEVEL="INFO"))
    send(process, INITIALIZE)
    answer = read_message(process)
    assert answer["id"] == 1
    assert answer["result"]["serverInfo"]["name"] == "Memory MCP Server"
    send(process, INITIALIZED)
    return process


def test_end_of_input_ends_the_process_with_status_zero(initialized: subprocess.Popen[bytes]) -> None:
    stdout, stderr = initialized.communicate(timeout=30)  # closes stdin

    assert initialized.returncode == 0, stderr.decode(errors="replace")[-3000:]
    assert stdout == b""


def test_sigterm_while_idle_ends_the_process_with_status_zero(initialized: subprocess.Popen[bytes]) -> None:
    # The request proves the full server (not only the handshake) is up before the signal.
    send(initialized, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert read_message(initialized)["id"] == 2

    initialized.send_signal(signal.SIGTERM)

    assert initialized.wait(timeout=30) == 0


def test_calls_sent_before_end_of_input_are_all_answered_and_stdout_holds_only_json_rpc(
    initialized: subprocess.Popen[bytes],
) -> None:
    write = {
        "organization": "acme",
        "scope_type": "organization",
        "memory_type": "fact",
        "current_content": "The staging cluster runs in eu-west-1.",
    }
    send(
        initialized,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        tool_call(3, "memory-write", write),
        tool_call(4, "memory-write", write | {"memory_type": "rule"}),
        {"jsonrpc": "2.0", "id": 5, "method": "no/such/method"},
    )

    stdout, stderr = initialized.communicate(timeout=60)

    assert initialized.returncode == 0
    lines = stdout.decode().splitlines()
    messages = [json.loads(line) for line in lines]
    assert all(message["jsonrpc"] == "2.0" for message in messages)
    by_id = {message["id"]: message for message in messages}
    assert sorted(by_id) == [2, 3, 4, 5]
    assert by_id[3]["result"]["isError"] is False
    assert by_id[4]["result"]["isError"] is True
    assert by_id[5]["error"]["code"] < 0
    assert "serving MCP over stdio" in stderr.decode(), "logs go to stderr"
