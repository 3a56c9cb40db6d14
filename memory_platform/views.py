from __future__ import annotations

import hmac
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.db.models import Count
from django.db.utils import DatabaseError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from code_index.models import CodeIndexRun
from lifecycle.models import ConsolidationProposal, ProposalState
from memories.embedding_pipeline import pending_memories
from memories.health import platform_health
from memory_platform import metrics
from memory_platform.db import replicas
from memory_platform.exceptions import AuthenticationFailed
from memory_platform.models import Heartbeat
from organizations.tokens import bearer_token


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """The database answers and has pgvector (else 503); the embedding provider's state; the
    background worker, with how many memories wait for an embedding. The status word is the one
    every report gives (memories.health): a failing provider or a dead worker makes it "degraded",
    still 200 (the web process serves, and pulling it out of a load balancer would not bring the
    worker back); a worker just started and not yet heard from makes it "starting"."""
    try:
        health = platform_health()
    except DatabaseError as exc:
        return JsonResponse(
            {"status": "error", "database": {"ok": False, "error": str(exc).strip()}, "pgvector": {"ok": False}},
            status=503,
        )
    pending = pending_memories().count()
    body = {
        "status": health.status,
        "database": {"ok": True, "version": health.server_version},
        "pgvector": {"ok": bool(health.pgvector_version), "version": health.pgvector_version},
        "embedding": {"state": health.embedding.get("state"), "error": health.embedding.get("error")},
        "worker": {**health.worker, "pending_embeddings": pending},
    }
    replica = replicas.status()
    if replica is not None:  # searches read the primary meanwhile: the platform serves as it would without one
        body["replica"] = replica
    return JsonResponse(body, status=200 if health.pgvector_version else 503)


@require_safe
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus metrics (memory_platform/metrics.py) for a scraper bearing METRICS_TOKEN; none at
    all (404) while METRICS_TOKEN is unset."""
    token = settings.METRICS_TOKEN
    if not token:
        raise Http404("no metrics: METRICS_TOKEN is not set")
    try:
        supplied = bearer_token(request.headers.get("Authorization", "")) or ""
    except AuthenticationFailed:
        supplied = ""
    if not hmac.compare_digest(supplied.encode(), token.encode()):
        response = HttpResponse("send 'Authorization: Bearer <METRICS_TOKEN>'\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(generate_latest(metrics.registry(PlatformState())), content_type=CONTENT_TYPE_LATEST)


class PlatformState(Collector):
    """What the database and the broker know, read at each scrape by the process answering it."""

    def collect(self) -> Iterator[Any]:
        backlog = GaugeMetricFamily(
            "memory_platform_embedding_backlog", "Memories waiting for their embedding (pending)."
        )
        backlog.add_metric([], pending_memories().count())
        yield backlog

        replica = replicas.status()
        if replica is not None:
            lag = GaugeMetricFamily(
                "memory_platform_replica_lag_seconds", "How far the read replica is behind (-1: it does not answer)."
            )
            lag.add_metric([], replica.get("lag_seconds", -1.0))
            yield lag

        proposals = GaugeMetricFamily(
            "memory_platform_open_proposals", "Consolidation proposals waiting for a curator, by kind.", labels=["kind"]
        )
        open_ones = ConsolidationProposal.objects.filter(state=ProposalState.OPEN)
        for row in open_ones.values("kind").annotate(n=Count("id")).order_by("kind"):
            proposals.add_metric([row["kind"]], row["n"])
        yield proposals

        heartbeat = GaugeMetricFamily(
            "memory_platform_heartbeat_age_seconds",
            "Seconds since the worker and beat last said they were alive (absent: never).",
            labels=["name"],
        )
        now = timezone.now()
        for name, beat_at in Heartbeat.objects.values_list("name", "beat_at"):
            heartbeat.add_metric([name], (now - beat_at).total_seconds())
        yield heartbeat

        runs = GaugeMetricFamily(
            "memory_platform_code_index_runs", "Code-index runs ever started, by status.", labels=["status"]
        )
        for row in CodeIndexRun.objects.values("status").annotate(n=Count("id")).order_by("status"):
            runs.add_metric([row["status"]], row["n"])
        yield runs

        depth = metrics.queue_depth()
        if depth is not None:
            queue = GaugeMetricFamily(
                "memory_platform_task_queue_depth", "Celery messages waiting in the queue.", labels=["queue"]
            )
            queue.add_metric([settings.CELERY_TASK_DEFAULT_QUEUE], depth)
            yield queue
