from __future__ import annotations

from django.db import connection
from django.db.utils import DatabaseError
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_safe


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness and readiness: the database answers and has pgvector."""
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
    body = {
        "status": "ok" if pgvector_version else "degraded",
        "database": {"ok": True, "version": server_version},
        "pgvector": {"ok": bool(pgvector_version), "version": pgvector_version},
    }
    return JsonResponse(body, status=200 if pgvector_version else 503)
