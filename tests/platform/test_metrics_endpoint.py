"""/metrics: Prometheus text for a scraper bearing METRICS_TOKEN, absent without one; what it says
is read back with the Prometheus client's own parser."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client, override_settings
from prometheus_client.parser import text_string_to_metric_families

from lifecycle.models import ProposalKind
from lifecycle.services import proposal_create
from memory_platform import heartbeat
from memory_platform.metrics import forget_dead_processes, process_identifier
from tests.conftest import MemoryFactory, Tenant
from tests.mcp.http import bearer

pytestmark = pytest.mark.django_db

TOKEN = "scrape-secret-1"
JSON = "application/json"
MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}
METRIC = re.compile(r"memory_platform_\w+")


class Scrape:
    """One answer of /metrics, parsed: every sample by its name."""

    def __init__(self, client: Client) -> None:
        response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        assert response.status_code == 200, response.content
        assert response["Content-Type"].startswith("text/plain; version=")
        self.samples: list[Any] = [
            sample for family in text_string_to_metric_families(response.content.decode()) for sample in family.samples
        ]

    def value(self, sample: str, **labels: str) -> float:
        """The sum of ``sample``'s values whose labels include ``labels``."""
        return sum(
            s.value for s in self.samples if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items())
        )

    def labels(self, sample: str, label: str) -> set[str]:
        return {s.labels[label] for s in self.samples if s.name == sample}


def test_without_a_token_configured_there_are_no_metrics(client: Client) -> None:
    assert client.get("/metrics").status_code == 404


@override_settings(METRICS_TOKEN=TOKEN)
def test_a_scraper_without_the_token_is_refused(client: Client, acme: Tenant) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, bearer(acme.raw_tokens["admin"])):
        response = client.get("/metrics", headers=headers)
        assert response.status_code == 401, headers
        assert response["WWW-Authenticate"].startswith("Bearer")


@override_settings(METRICS_TOKEN=TOKEN)
def test_requests_are_counted_by_interface_endpoint_and_status(client: Client, acme: Tenant) -> None:
    before = Scrape(client)
    headers = bearer(acme.raw_tokens["agent"])
    for _ in range(3):
        response = client.post("/api/v1/memories/search/", {"query": "deploys"}, JSON, headers=headers)
        assert response.status_code == 200
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    search = {**call, "params": {"name": "memory-search", "arguments": {"query": "deploys"}}}
    assert client.post("/mcp", search, JSON, headers={**headers, **MCP_ACCEPT}).status_code == 200
    invented = {**call, "params": {"name": "no-such-tool", "arguments": {}}}
    client.post("/mcp", invented, JSON, headers={**headers, **MCP_ACCEPT})
    missing = "/api/v1/memories/00000000-0000-0000-0000-000000000000/"
    assert client.get(missing, headers=headers).status_code == 404
    after = Scrape(client)

    def grew(**labels: str) -> float:
        name = "memory_platform_requests_total"
        return after.value(name, **labels) - before.value(name, **labels)

    assert grew(interface="rest", endpoint="/api/v1/memories/search/", status="200") == 3
    assert grew(interface="mcp", endpoint="tools/call memory-search", status="200") == 1
    assert grew(interface="mcp", endpoint="tools/call unknown") == 1
    assert grew(interface="rest", endpoint="/api/v1/memories/<uuid:memory_id>/", status="404") == 1
    timed = after.value("memory_platform_request_seconds_count", interface="rest", endpoint="/api/v1/memories/search/")
    assert timed >= 3
    stages = after.labels("memory_platform_search_stage_seconds_count", "stage")
    assert {"keyword", "vector", "rank", "hydrate"} <= stages
    assert after.value("memory_platform_embedding_seconds_count") > before.value(
        "memory_platform_embedding_seconds_count"
    )


@override_settings(METRICS_TOKEN=TOKEN, API_THROTTLE_RATE="2/min")
def test_refusals_of_the_rate_limit_are_counted(client: Client, acme: Tenant) -> None:
    before = Scrape(client).value("memory_platform_throttled_requests_total", scope="principal")
    headers = bearer(acme.raw_tokens["reader"])
    statuses = [client.get("/api/v1/repositories/", headers=headers).status_code for _ in range(4)]

    assert statuses.count(429) == 2
    after = Scrape(client).value("memory_platform_throttled_requests_total", scope="principal")
    assert after - before == 2


@override_settings(METRICS_TOKEN=TOKEN)
def test_the_state_of_the_platform_is_read_at_each_scrape(
    client: Client, acme: Tenant, make_memory: MemoryFactory
) -> None:
    first, second = make_memory(), make_memory()
    proposal_create(
        organization_id=acme.organization.pk, kind=ProposalKind.MERGE, memory_ids=[first.pk, second.pk], created_by="t"
    )
    heartbeat.beat(heartbeat.WORKER)

    scrape = Scrape(client)

    assert scrape.value("memory_platform_open_proposals", kind="merge") == 1
    assert 0 <= scrape.value("memory_platform_heartbeat_age_seconds", name="worker") < 60
    assert scrape.value("memory_platform_embedding_backlog") == 0
    assert scrape.labels("memory_platform_task_queue_depth", "queue") == {"celery"}


@override_settings(METRICS_TOKEN=TOKEN)
def test_the_grafana_dashboard_reads_only_metrics_that_exist(client: Client) -> None:
    dashboard = json.loads((Path(settings.BASE_DIR) / "deploy" / "grafana" / "memory-platform.json").read_text())
    expressions = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    read = {re.sub(r"_(total|bucket|count|sum)$", "", name) for expr in expressions for name in METRIC.findall(expr)}
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    offered = {family.name for family in text_string_to_metric_families(response.content.decode())}

    assert read and read <= offered, read - offered


def test_the_live_gauges_of_ended_processes_no_longer_count(tmp_path: Path) -> None:
    mine, ended = tmp_path / f"gauge_livesum_{process_identifier()}.db", tmp_path / "gauge_livesum_4194303.db"
    for path in (mine, ended, tmp_path / "counter_4194303.db"):
        path.write_bytes(b"")

    forget_dead_processes(tmp_path)

    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([mine.name, "counter_4194303.db"])
