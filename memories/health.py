"""The platform's health, read the same way for every report: /healthz (load balancers and
operators), platform-status and GET /api/v1/status/ (agents and apps).

One word, by one rule (memory_platform.heartbeat.status): ``ok``; ``starting`` while a worker just
started has not reported; ``degraded`` when the database lacks pgvector, the embedding provider
fails (new memories then wait for their vectors) or the worker or beat has stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection

from memories.embeddings import get_provider
from memory_platform import heartbeat


@dataclass(frozen=True)
class Health:
    server_version: str
    pgvector_version: str | None
    embedding: dict[str, object]  # the provider as it describes itself (its state included)
    worker: dict[str, Any]  # heartbeat.liveness()

    @property
    def status(self) -> str:
        usable = bool(self.pgvector_version) and self.embedding.get("state") != "error"
        return heartbeat.status(database_ok=usable, worker=self.worker)


def platform_health() -> Health:
    """Read now; a database that does not answer raises DatabaseError (each report says so its way)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('server_version'), (SELECT extversion FROM pg_extension WHERE extname = 'vector')"
        )
        server_version, pgvector_version = cursor.fetchone()
    return Health(
        server_version=server_version,
        pgvector_version=pgvector_version,
        embedding=get_provider().describe(),
        worker=heartbeat.liveness(),
    )
