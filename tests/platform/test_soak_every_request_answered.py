"""A server answers every request it has read: 16 clients on keep-alive connections, REST and MCP
mixed (searches, writes, gets, the consolidate listing, status, and now and then a hostile body),
for SOAK_SECONDS against two web processes, the rebalancing of connections on. 10 s by default: some
800 requests in a busy suite, and twenty rounds of rebalancing (one each half second), while the
soak takes every core it can; longer soaks (e.g. SOAK_SECONDS=600) before a release.

Counted: requests answered (any status), and requests the server dropped without an answer (the
connection closed under them). Dropped must be 0. The counts go to test-artifacts/hardening.json.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.artifacts import record
from tests.conftest import Tenant
from tests.live_server import start_server, stop
from tests.mcp.http import bearer

pytestmark = pytest.mark.django_db(transaction=True)

CLIENTS = 16
SECONDS = float(os.environ.get("SOAK_SECONDS", "10"))
QUERIES = ["deploy on friday", "how are amounts stored", "who owns billing", "retry policy", "release train"]


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


def _call(name: str, arguments: dict[str, Any], number: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


Sender = Callable[[httpx.Client, random.Random, int], httpx.Response]


def _write(client: httpx.Client, rng: random.Random, number: int) -> httpx.Response:
    fields = {"scope_type": "organization", "memory_type": "fact",
              "current_content": f"Soak note {number}: {rng.choice(QUERIES)} takes care."}  # fmt: skip
    if number % 2:
        return client.post("/api/v1/memories/", json=fields)
    return client.post("/mcp", json=_call("memory-write", fields, number))


def _hostile(client: httpx.Client, rng: random.Random, number: int) -> httpx.Response:
    value = rng.choice([_deep(500), "\ud800", "a\x00b", 2**64])
    return client.post("/mcp", content=json.dumps(_call("memory-delete", {"id": value}, number)))


# (weight, what it sends)
MIX: list[tuple[int, Sender]] = [
    (25, lambda c, r, n: c.post("/api/v1/memories/search/", json={"query": r.choice(QUERIES), "limit": 5})),
    (25, lambda c, r, n: c.post("/mcp", json=_call("memory-search", {"query": r.choice(QUERIES), "limit": 5}, n))),
    (12, _write),
    (13, lambda c, r, n: c.get("/api/v1/memories/", params={"limit": 5})),
    (7, lambda c, r, n: c.post("/mcp", json=_call("memory-consolidate", {}, n))),
    (8, lambda c, r, n: c.get("/api/v1/status/")),
    (8, _hostile),
    # Refused before their bodies are read: answered all the same (memory_platform.wsgi.DrainedBodies).
    (1, lambda c, r, n: c.post("/mcp", content=b"x" * 2_000_000)),
    (1, lambda c, r, n: c.post("/mcp", headers={"Origin": "http://evil.example"}, content=b" " * 200_000)),
]


def _request(client: httpx.Client, rng: random.Random, number: int) -> httpx.Response:
    """One request of the mix."""
    [send] = rng.choices([send for _, send in MIX], weights=[weight for weight, _ in MIX])
    return send(client, rng, number)


def test_every_request_is_answered_under_load(acme: Tenant, server_env: dict[str, str], tmp_path: Path) -> None:
    env = {**server_env, "API_THROTTLE_RATE": ""}  # the soak is not about the rate limit
    process, base_url = start_server(env, tmp_path / "server.log", workers=2)
    outcomes: Counter[str] = Counter()
    dropped: list[str] = []
    lock = threading.Lock()
    deadline = time.monotonic() + SECONDS
    numbers = iter(range(1, 10**9))

    def client_loop(seed: int) -> None:
        rng = random.Random(seed)  # noqa: S311 - which request to send, not a secret
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        headers = bearer(acme.raw_tokens["agent"])
        with httpx.Client(base_url=base_url, headers=headers, timeout=60, limits=limits) as client:
            while time.monotonic() < deadline:
                with lock:
                    number = next(numbers)
                try:
                    response = _request(client, rng, number)
                except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as error:
                    with lock:
                        outcomes["dropped"] += 1
                        dropped.append(f"{number}: {type(error).__name__}: {error}")
                    continue
                with lock:
                    outcomes[f"answered {response.status_code // 100}xx"] += 1

    threads = [threading.Thread(target=client_loop, args=(seed,)) for seed in range(CLIENTS)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        stop(process)
    answered = sum(n for outcome, n in outcomes.items() if outcome.startswith("answered"))
    record("hardening", f"soak: requests answered ({CLIENTS} keep-alive clients, {SECONDS:.0f} s)", answered)
    record("hardening", "soak: requests dropped without an answer", outcomes["dropped"])
    assert outcomes["dropped"] == 0, dropped[:10]
    assert outcomes["answered 5xx"] == 0, outcomes
    assert answered > 10 * CLIENTS, outcomes
