"""Two web processes count into one /metrics (prometheus_client's multiprocess mode, as `serve` sets
it up), and their log lines are JSON carrying the request's id, organization and principal."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import Tenant
from tests.live_server import start_server, stop
from tests.mcp.http import bearer

pytestmark = pytest.mark.django_db(transaction=True)

TOKEN = "scrape-secret-2"
REQUESTS = 40


def _served(base_url: str) -> float:
    response = httpx.get(f"{base_url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert response.status_code == 200, response.text
    return sum(
        sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
        if sample.name == "memory_platform_requests_total"
        and sample.labels == {"interface": "rest", "endpoint": "/api/v1/repositories/", "status": "200"}
    )


def test_both_web_processes_count_into_one_answer(acme: Tenant, server_env: dict[str, str], tmp_path: Path) -> None:
    directory = tmp_path / "metrics"
    directory.mkdir()
    env = {**server_env, "PROMETHEUS_MULTIPROC_DIR": str(directory), "METRICS_TOKEN": TOKEN, "LOG_FORMAT": "json"}
    log = tmp_path / "server.log"
    process, base_url = start_server(env, log, workers=2)
    token = acme.raw_tokens["reader"]
    try:
        for _ in range(REQUESTS):  # a connection each: the two processes share them
            assert httpx.get(f"{base_url}/api/v1/repositories/", headers=bearer(token), timeout=30).status_code == 200
        missing = httpx.get(
            f"{base_url}/api/v1/memories/00000000-0000-0000-0000-000000000000/",
            headers={**bearer(token), "X-Request-ID": "live-404"},
            timeout=30,
        )
        scrapes = [_served(base_url) for _ in range(6)]
    finally:
        stop(process)

    assert missing.status_code == 404 and missing.headers["X-Request-ID"] == "live-404"
    assert scrapes == [REQUESTS] * 6, "every scrape, whichever process answers it, counts all requests"
    writers = {path.stem.rsplit("_", 1)[-1] for path in directory.glob("counter_*.db")}
    assert len(writers) == 2, f"both web processes counted: {sorted(directory.iterdir())}"
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    [warning] = [line for line in lines if line.get("request_id") == "live-404"]
    assert warning["organization"] == "acme" and warning["principal"] == acme.reader.label
    assert warning["message"].startswith("Not Found: /api/v1/memories/")
    assert token not in log.read_text()
