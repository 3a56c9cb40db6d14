from __future__ import annotations

import contextlib
import socket
from datetime import timedelta

import pytest
from django.test import Client, override_settings
from django.utils import timezone

from memories.embeddings import EmbeddingError, get_provider, reset_provider
from memories.embeddings.http import OpenAICompatibleProvider
from memories.models import Memory
from memories.selectors import memory_status_report
from memory_platform import heartbeat
from memory_platform.models import Heartbeat
from tests.conftest import Tenant


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


@pytest.mark.django_db
def test_a_worker_just_started_is_starting_until_it_and_beat_have_beaten(client: Client) -> None:
    heartbeat.beat(), heartbeat.beat(heartbeat.BEAT)  # the last run's heartbeats
    Heartbeat.objects.update(beat_at=timezone.now() - timedelta(hours=1))
    heartbeat.started()  # serve starts a worker again

    starting = client.get("/healthz").json()
    heartbeat.beat()
    half = client.get("/healthz").json()
    heartbeat.beat(heartbeat.BEAT)
    ready = client.get("/healthz").json()

    assert starting["status"] == "starting" and starting["worker"]["starting"] is True
    assert "starting: the worker and beat started" in starting["worker"]["problem"]
    assert half["status"] == "starting" and "beat started" in half["worker"]["problem"]
    assert ready["status"] == "ok" and "starting" not in ready["worker"]


@pytest.mark.django_db
def test_a_worker_that_never_beats_after_its_start_is_degraded_in_time(client: Client) -> None:
    heartbeat.started()
    Heartbeat.objects.filter(name=heartbeat.STARTED).update(beat_at=timezone.now() - timedelta(minutes=10))

    body = client.get("/healthz").json()

    assert body["status"] == "degraded" and body["worker"]["problem"] == "no heartbeat yet: is a worker running?"


@pytest.mark.django_db
def test_healthz_and_the_status_call_a_failing_embedding_provider_degraded_alike(client: Client, acme: Tenant) -> None:
    heartbeat.beat(), heartbeat.beat(heartbeat.BEAT)  # a worker and beat are alive
    with socket.socket() as probe:  # a port nothing listens on: an embedding service that is down
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    down = OpenAICompatibleProvider(
        base_url=f"http://127.0.0.1:{port}/v1", model="unreachable-model", api_key="", dimensions=384, timeout=2
    )
    installed = get_provider()
    reset_provider(down)
    try:
        assert client.get("/healthz").json()["status"] == "ok"
        with contextlib.suppress(EmbeddingError):
            down.embed(["a memory to embed"])

        health = client.get("/healthz").json()
        status = memory_status_report(acme.agent)

        assert health["status"] == status["status"] == "degraded"
        assert health["embedding"]["state"] == status["embedding"]["state"] == "error"
    finally:
        reset_provider(installed)
