"""The rate limit counts exactly with callers in parallel: two web processes, six threads on one
token, REST and MCP mixed, on the default (counters in PostgreSQL) and with Redis.

Requests leave on a shared schedule, each at least 1 / rate after the one before (a thread that was
held up never sends a burst to catch up), so the rate sent is never above the one asked for. Under
the limit (half of it: room for a server that stalls up to a second, then counts what waited at
once) nothing is refused. Over
it (140%), no count is lost: at least the share the limit implies at the rate actually sent is
refused (1 - limit / rate: about 29% when the machine keeps up), each with Retry-After; and the limit
is given: the requests served add up to the limit a second, less what a server that stalled (on
a machine busy with other tests) let through in bunches, where the sliding window's estimate
refuses more than the mean rate implies.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from tests.conftest import Tenant
from tests.live_server import start_server, stop
from tests.mcp.http import bearer

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 20  # a second: the same sliding window as a minute's, in a test that takes seconds
THREADS = 10  # enough that a server slow to answer does not slow the rate sent
UNDER = 0.5  # of the limit: nothing may be refused (75% refused 3 of 75 once, on a machine twice as busy)
REDIS = "redis://127.0.0.1:6379/13"


def _send_at(base_url: str, token: str, rate: float, seconds: float) -> tuple[Counter[str], float]:
    """Send ``rate`` requests a second for ``seconds``, REST and MCP alternating: their outcomes, and
    the rate they were actually sent at."""
    outcomes: Counter[str] = Counter()
    numbers = itertools.count()
    lock = threading.Lock()
    total = int(rate * seconds)
    slots = {"next": time.monotonic() + 0.5, "first": 0.0, "last": 0.0}

    def work() -> None:
        with httpx.Client(base_url=base_url, headers=bearer(token), timeout=30) as client:  # keep-alive
            while True:
                with lock:
                    number = next(numbers)
                    if number >= total:
                        return
                    slot = max(time.monotonic(), slots["next"])
                    slots["next"] = slot + 1 / rate
                    slots["first"] = slots["first"] or slot
                    slots["last"] = slot
                time.sleep(max(0.0, slot - time.monotonic()))
                if number % 2:
                    response = client.get("/api/v1/repositories/")
                else:
                    response = client.post("/mcp", json={"jsonrpc": "2.0", "id": number, "method": "tools/list"})
                refused = response.status_code == 429
                if refused:
                    assert int(response.headers["Retry-After"]) >= 1
                with lock:
                    outcomes["refused" if refused else "served" if response.status_code == 200 else "other"] += 1

    threads = [threading.Thread(target=work) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes, (total - 1) / (slots["last"] - slots["first"])


@pytest.mark.parametrize("counters", ["postgresql", "redis"])
def test_the_limit_holds_for_parallel_callers(
    acme: Tenant, server_env: dict[str, str], tmp_path: Path, counters: str
) -> None:
    env = {**server_env, "API_THROTTLE_RATE": f"{LIMIT}/s"}
    if counters == "redis":
        redis.Redis.from_url(REDIS).flushdb()
        env["REDIS_URL"] = REDIS
    process, base_url = start_server(env, tmp_path / "server.log", workers=2)
    try:
        under, _ = _send_at(base_url, acme.raw_tokens["agent"], rate=UNDER * LIMIT, seconds=5)
        # Another token, so nothing the first one was counted weighs.
        over, sent_rate = _send_at(base_url, acme.raw_tokens["reader"], rate=1.4 * LIMIT, seconds=8)
    finally:
        stop(process)

    assert under == Counter(served=int(UNDER * LIMIT * 5)), under
    share = over["refused"] / sum(over.values())
    expected = 1 - LIMIT / sent_rate
    assert over["other"] == 0, over
    assert sent_rate > 1.2 * LIMIT, f"sent at {sent_rate:.1f}/s only: the test measured too little over the limit"
    assert share >= expected - 0.05, f"counts were lost: {over}, {share:.3f} refused against {expected:.3f}"
    served_rate = over["served"] * sent_rate / sum(over.values())
    assert served_rate >= 0.75 * LIMIT, f"{served_rate:.1f}/s served, limit {LIMIT}/s: {over}, {sent_rate:.1f}/s sent"


def test_each_request_is_counted_by_one_statement(acme: Tenant, settings: Any) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memory_platform.throttling import retry_after

    settings.API_THROTTLE_RATE = "3/min"
    with CaptureQueriesContext(connection) as captured:
        results = [retry_after(acme.agent) for _ in range(4)]

    assert results[:3] == [None, None, None] and results[3] is not None and results[3] >= 1
    counting = [q["sql"] for q in captured.captured_queries if "ratecount" in q["sql"]]
    # Four hits (the first also clears the caller's older windows) and one count taken back.
    assert len(counting) == 4 + 1 + 1, counting
