from __future__ import annotations

from django.db.utils import DatabaseError
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_safe

from memories.health import platform_health
from memories.models import Memory


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
    pending = Memory.objects.filter(embedding_status="pending").count()
    body = {
        "status": health.status,
        "database": {"ok": True, "version": health.server_version},
        "pgvector": {"ok": bool(health.pgvector_version), "version": health.pgvector_version},
        "embedding": {"state": health.embedding.get("state"), "error": health.embedding.get("error")},
        "worker": {**health.worker, "pending_embeddings": pending},
    }
    return JsonResponse(body, status=200 if health.pgvector_version else 503)
