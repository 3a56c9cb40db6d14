from __future__ import annotations

from django.db import connection
from django.db.utils import DatabaseError
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_safe

from memories.models import Memory
from memory_platform import heartbeat


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """The database answers and has pgvector (else 503), and the background worker is alive with
    how many memories wait for an embedding (a dead worker makes the status "degraded", still 200:
    the web process serves, and pulling it out of a load balancer would not bring the worker back;
    one just started and not yet heard from makes it "starting")."""
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('server_version'), "
                "(SELECT extversion FROM pg_extension WHERE extname = 'vector')"
            )
            server_version, pgvector_version = cursor.fetchone()
    except DatabaseError as exc:
        return JsonResponse(
            {"status": "error", "database": {"ok": False, "error": str(exc).strip()}, "pgvector": {"ok": False}},
            status=503,
        )
    worker = {**heartbeat.liveness(), "pending_embeddings": Memory.objects.filter(embedding_status="pending").count()}
    body = {
        "status": heartbeat.status(database_ok=bool(pgvector_version), worker=worker),
        "database": {"ok": True, "version": server_version},
        "pgvector": {"ok": bool(pgvector_version), "version": pgvector_version},
        "worker": worker,
    }
    return JsonResponse(body, status=200 if pgvector_version else 503)
