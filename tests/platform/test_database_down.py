"""The database goes away and comes back: a real server (granian) answers fast 503s with
Retry-After in each interface's own shape while it is gone, and serves again once it is back.

The server reaches PostgreSQL through a small TCP relay this test switches off and on, which is
what a restarting or unreachable database looks like from the server's side.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import Iterator

import httpx
import pytest
from django.conf import settings

from memory_platform import web
from tests.conftest import Tenant
from tests.dbrelay import Relay
from tests.live_server import free_port, tail
from tests.mcp.http import INITIALIZE, bearer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def relayed_server(server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Relay]]:
    relay = Relay()
    relay.up()
    env = relay.environment(server_env)
    port = free_port()
    log = tmp_path_factory.mktemp("relayed") / "server.log"
    command = web.command("127.0.0.1", port)
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=settings.BASE_DIR, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base}/healthz", timeout=5).status_code in (200, 503):
                    break
            assert process.poll() is None and time.monotonic() < deadline, tail(log)
            time.sleep(0.2)
        yield base, relay
    finally:
        relay.down()
        process.terminate()
        process.wait(timeout=20)


def _timed(request: httpx.Request) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    with httpx.Client(timeout=30) as client:
        response = client.send(request)
    return response, time.monotonic() - started


def test_while_the_database_is_gone_every_interface_answers_503_fast_then_serves_again(
    acme: Tenant, relayed_server: tuple[str, Relay]
) -> None:
    base, relay = relayed_server
    token = acme.raw_tokens["agent"]
    rest = httpx.Request("GET", f"{base}/api/v1/status/", headers={"Authorization": f"Bearer {token}"})
    mcp = httpx.Request(
        "POST", f"{base}/mcp", headers=bearer(token), content=httpx.Request("POST", "/", json=INITIALIZE).content
    )
    assert _timed(rest)[0].status_code == 200

    relay.down()
    answered, seconds = _timed(rest)
    assert answered.status_code == 503 and seconds < 5, (answered.status_code, seconds, answered.text[:600])
    assert answered.headers["Retry-After"] == "5"
    assert answered.json()["error"]["code"] == "database_unavailable"
    answered, seconds = _timed(mcp)
    assert answered.status_code == 503 and seconds < 5, answered.text[:800]
    assert answered.json()["jsonrpc"] == "2.0" and answered.json()["error"]["code"] == -32003
    assert _timed(httpx.Request("GET", f"{base}/healthz"))[0].status_code == 503

    relay.up()
    deadline = time.monotonic() + 30
    while _timed(rest)[0].status_code != 200:
        assert time.monotonic() < deadline, "the server did not recover once the database was back"
        time.sleep(0.5)
    assert _timed(mcp)[0].status_code == 200


def test_an_unexpected_failure_on_mcp_is_answered_in_json_rpcs_shape() -> None:
    from django.test import RequestFactory

    from memory_platform.urls import handler500

    response = handler500(RequestFactory().post("/mcp"))

    assert response.status_code == 500
    body = json.loads(response.content)
    assert body["jsonrpc"] == "2.0" and body["error"]["code"] == -32603
