"""The PostgreSQL backend of the platform: Django's, plus what every connection of ours needs.

- With the embedded default (no DATABASE_URL) it starts the embedded server on first connection:
  every process that touches the database (web, workers, tests, any manage.py command) finds it
  running, and processes that never touch it never pay for it.
- Each new connection gets the HNSW search settings the vector retriever needs as its session's
  own (``session_settings``), so that a search sends one statement, not the settings with it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection as default_connection
from django.db.backends.postgresql import base

from memory_platform import embedded_db


def session_settings() -> dict[str, str]:
    """What every connection sets for its whole session, when connections keep their own state
    (DATABASE_PREPARED_STATEMENTS: a pooler in transaction mode would hand a statement to a server
    connection that never ran these, so then the search sends them with each query instead).

    The HNSW index is walked with pgvector's iterative scan, so that a query filtered to one
    organization still gets as many rows as it asks for, and with SEARCH_HNSW_EF_SEARCH candidates
    (pgvector's default, 40, loses recall). A query that wants more rows than that raises it for
    itself (memories.search.vector)."""
    if not settings.DATABASE_PREPARED_STATEMENTS:
        return {}
    return {"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": str(settings.SEARCH_HNSW_EF_SEARCH)}


# Set on each psycopg connection configured with session_settings(): the ef_search it walks with.
_EF_SEARCH = "_memory_platform_hnsw_ef_search"


def session_ef_search() -> int:
    """The HNSW ef_search the default connection's session has, with the iterative scan; 0 when its
    session has no HNSW settings (the query must send them)."""
    default_connection.ensure_connection()
    return int(getattr(default_connection.connection, _EF_SEARCH, 0))


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        if settings.EMBEDDED_DATABASE:
            embedded_db.ensure_running(Path(settings.DATA_DIR))
        return super().get_new_connection(conn_params)

    def _configure_connection(self, connection: Any) -> bool:
        # Called once per new connection: by the pool when it opens one, else by init_connection_state.
        # Django's own (the time zone, the role), missing from its type stubs.
        commit = bool(super()._configure_connection(connection))  # type: ignore[misc]
        wanted = session_settings()
        if wanted:
            # Set whether or not pgvector is loaded yet: a dotted name is kept until it is.
            calls = ", ".join("set_config(%s, %s, false)" for _ in wanted)
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT {calls}", [value for pair in wanted.items() for value in pair])
            setattr(connection, _EF_SEARCH, int(wanted["hnsw.ef_search"]))
            commit = True
        return commit
