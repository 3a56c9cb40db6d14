from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client, override_settings
from django.utils import timezone

from memories.models import Memory
from memory_platform import heartbeat
from memory_platform.models import Heartbeat


@pytest.mark.django_db
def test_healthz_reports_the_database_and_pgvector(client: Client) -> None:
    heartbeat.beat(), heartbeat.beat(heartbeat.BEAT)  # a worker and beat are alive
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert int(body["database"]["version"].split(".")[0]) >= 15
    assert body["pgvector"]["ok"] is True
    major, minor, *_ = body["pgvector"]["version"].split(".")
    assert (int(major), int(minor)) >= (0, 5)


@pytest.mark.django_db
def test_healthz_needs_no_login(client: Client) -> None:
    assert client.get("/healthz").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_healthz_only_answers_get_and_head(client: Client, method: str) -> None:
    response = getattr(client, method)("/healthz")

    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"


@pytest.mark.django_db
def test_healthz_answers_head_for_load_balancers(client: Client) -> None:
    assert client.head("/healthz").status_code == 200


@pytest.mark.django_db
def test_healthz_reports_the_worker_and_the_backlog(client: Client) -> None:
    assert client.get("/healthz").json()["worker"]["problem"] == "no heartbeat yet: is a worker running?"

    heartbeat.beat()
    without_beat = client.get("/healthz").json()
    assert (
        without_beat["status"] == "degraded"
        and "beat, which starts the periodic work" in without_beat["worker"]["problem"]
    )
    heartbeat.beat(heartbeat.BEAT)
    fresh = client.get("/healthz").json()
    assert fresh["status"] == "ok" and fresh["worker"]["ok"] is True and fresh["worker"]["seconds_ago"] < 5
    assert fresh["worker"]["pending_embeddings"] == Memory.objects.filter(embedding_status="pending").count()

    Heartbeat.objects.update(beat_at=timezone.now() - timedelta(seconds=300))
    with override_settings(HEARTBEAT_STALE_SECONDS=120):
        stale = client.get("/healthz")
    assert stale.status_code == 200  # the web process serves; the body says what is wrong
    assert stale.json()["status"] == "degraded"
    assert stale.json()["worker"]["ok"] is False and "no heartbeat for 300 s" in stale.json()["worker"]["problem"]

    heartbeat.beat(heartbeat.BEAT)  # beat goes on sending; the worker is still gone
    with override_settings(HEARTBEAT_STALE_SECONDS=120):
        report = client.get("/healthz").json()["worker"]
    assert report["ok"] is False and report["beat"]["ok"] is True
    assert report["problem"] == "beat sends work but no worker runs it: is a worker running?"
