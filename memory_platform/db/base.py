"""PostgreSQL backend that starts the embedded server on first connection.

Used only when no DATABASE_URL is set. Starting the server lazily here, rather than in each entry
point, means every process that touches the database (web, workers, tests, any manage.py command)
finds it running, and processes that never touch it never pay for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.backends.postgresql import base

from memory_platform import embedded_db


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        embedded_db.ensure_running(Path(settings.DATA_DIR))
        return super().get_new_connection(conn_params)
