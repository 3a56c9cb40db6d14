"""The PostgreSQL backend of the platform: Django's, plus what every connection of ours needs.

- With the embedded default (no DATABASE_URL) it starts the embedded server on first connection:
  every process that touches the database (web, workers, tests, any manage.py command) finds it
  running, and processes that never touch it never pay for it.
- Each new connection gets the HNSW search settings the vector retriever needs as its session's
  own (``session_settings``), so that a search sends one statement, not the settings with it.
- A pooled connection is checked before a request borrows it only when it has been idle for
  DATABASE_POOL_CHECK_AFTER_MS (``check_unless_just_used``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection as default_connection
from django.db.backends.postgresql import base
from psycopg_pool import ConnectionPool

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


# Set on each pooled psycopg connection when a request gives it back: time.monotonic() then.
_RETURNED_AT = "_memory_platform_returned_at"


def check_unless_just_used(connection: Any) -> None:
    """The pool's check of a connection before a request borrows it: a round trip to the server
    (psycopg_pool's own check), skipped when the connection went back to the pool less than
    DATABASE_POOL_CHECK_AFTER_MS ago and psycopg knows nothing wrong with it.

    Under load a connection goes back and out again within milliseconds, and the round trip cost
    0.5-0.65 ms of CPU a request (web process and PostgreSQL together, searches and gets). What the check is for, a
    connection whose server went away while it sat in the pool (a restart, a failover), takes longer
    than that to happen and be over: a connection idle that long is checked, and replaced if dead.
    One that the server dropped within the window fails its request with a 503, as a request already
    running when the server went away does. The same trade as HikariCP's aliveBypassWindowMs."""
    returned = getattr(connection, _RETURNED_AT, None)
    window = settings.DATABASE_POOL_CHECK_AFTER_MS / 1000
    if returned is not None and not connection.broken and time.monotonic() - returned < window:
        return
    ConnectionPool.check_connection(connection)


# pool, _close and _configure_connection are Django's, missing from its type stubs.
class DatabaseWrapper(base.DatabaseWrapper):
    @property
    def pool(self) -> ConnectionPool | None:
        pool = super().pool  # type: ignore[misc]
        # Django hands psycopg_pool its own check when CONN_HEALTH_CHECKS is on (it has no option
        # for another): this one takes its place.
        if pool is not None and pool._check is ConnectionPool.check_connection:
            pool._check = check_unless_just_used
        return pool

    def _close(self) -> None:
        if self.connection is not None and self.pool is not None:
            setattr(self.connection, _RETURNED_AT, time.monotonic())
        super()._close()  # type: ignore[misc]

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        if settings.EMBEDDED_DATABASE:
            embedded_db.ensure_running(Path(settings.DATA_DIR))
        return super().get_new_connection(conn_params)

    def _configure_connection(self, connection: Any) -> bool:
        # Called once per new connection: by the pool when it opens one, else by init_connection_state.
        # Django's own (the time zone, the role).
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
