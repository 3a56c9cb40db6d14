"""The database goes away under an open stdio session, or is away when it starts: each request is
answered at once with -32003 (retry later) and the session stays up, then serves again once the
database is back. The session reaches PostgreSQL through a relay the test switches off and on."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator

import pytest

from tests.conftest import Tenant
from tests.dbrelay import Relay
from tests.mcp.stdio import handshake, read_message, send, tool_call

pytestmark = pytest.mark.django_db(transaction=True)
Spawn = Callable[..., subprocess.Popen[bytes]]


@pytest.fixture
def relay() -> Iterator[Relay]:
    relay = Relay()
    relay.up()
    yield relay
    relay.down()


def _answer(process: subprocess.Popen[bytes], request_id: int) -> tuple[dict[str, object], float]:
    started = time.monotonic()
    send(process, tool_call(request_id, "memory-list", {}))
    answer = read_message(process, timeout=30)
    assert answer["id"] == request_id
    return answer, time.monotonic() - started


def _served_again(process: subprocess.Popen[bytes], first_id: int) -> None:
    deadline = time.monotonic() + 30
    request_id = first_id
    while "result" not in (answer := _answer(process, request_id)[0]):
        assert time.monotonic() < deadline, f"the session did not recover: {answer}"
        request_id += 1
        time.sleep(0.5)


def test_a_database_gone_mid_session_is_answered_fast_then_served_again(
    acme: Tenant, relay: Relay, stdio_env: Callable[..., dict[str, str]], spawn_stdio: Spawn
) -> None:
    process = spawn_stdio(relay.environment(stdio_env(acme.raw_tokens["agent"])))
    handshake(process)
    assert "result" in _answer(process, 2)[0]

    relay.down()
    answer, seconds = _answer(process, 3)

    assert answer["error"] == {"code": -32003, "message": answer["error"]["message"]}  # type: ignore[index]
    assert "database" in answer["error"]["message"] and seconds < 5, (answer, seconds)  # type: ignore[index]
    relay.up()
    _served_again(process, 4)


def test_a_session_started_while_the_database_is_away_serves_once_it_is_back(
    acme: Tenant, relay: Relay, stdio_env: Callable[..., dict[str, str]], spawn_stdio: Spawn
) -> None:
    relay.down()
    process = spawn_stdio(relay.environment(stdio_env(acme.raw_tokens["agent"])))
    handshake(process)

    # The first answer also waits for the process to finish starting; the next shows the refusal's cost.
    assert _answer(process, 2)[0]["error"]["code"] == -32003  # type: ignore[index]
    answer, seconds = _answer(process, 3)
    assert answer["error"]["code"] == -32003 and seconds < 5, (answer, seconds)  # type: ignore[index]

    relay.up()
    _served_again(process, 4)
    process.stdin.close()  # type: ignore[union-attr]
    assert process.wait(timeout=30) == 0
    assert b"Traceback" not in process.stderr.read()  # type: ignore[union-attr]
