"""Statements PostgreSQL parses and plans once per connection instead of on every request.

Django binds parameters in Python (psycopg's client-side binding): every statement reaches
PostgreSQL as new text, parsed and planned afresh. For the few statements that run on every request
or every search, planning costs more than running: the token lookup plans in 0.34 ms and runs in
0.04 (pg_stat_statements, 10k memories). ``prepared_cursor()`` runs its statements with server-side
binding as prepared statements: psycopg prepares a statement the first time a connection runs it
and keeps its name, and a pooled connection keeps its prepared statements from request to request.

Only for statements whose best plan does not depend on their values, since after five runs
PostgreSQL may keep one generic plan: lookups by a key or by a list of ids. The keyword query's plan
depends on its terms, and it ran slower prepared (5.4 ms against 4.3): the retrievers' queries go
through ``bound_cursor()`` instead, bound apart from their text but planned for their values.

DATABASE_PREPARED_STATEMENTS=0 turns this off: behind a pooler in transaction mode (PgBouncer's),
the next statement may reach a server connection where the statement was never prepared.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.postgresql.base import CursorDebugWrapper, ServerBindingCursor  # type: ignore[attr-defined]
from django.db.backends.utils import CursorWrapper
from psycopg.adapt import Dumper, PyFormat
from psycopg.types.numeric import IntBinaryDumper, IntDumper

# psycopg prepares what its cursor asks for only when the connection has a prepare threshold, and
# Django connects without one (None). These cursors ask themselves, so the threshold is set out of
# reach: the statements of Django's own cursors are never prepared by count.
_NEVER_BY_COUNT = 2**31 - 1


class _PreparingCursor(ServerBindingCursor):
    """Server-side binding; every statement prepared (on first use per connection, then reused)."""

    def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None, **kwargs: Any) -> Any:
        return super().execute(query, params, prepare=True, **kwargs)


class _BoundCursor(ServerBindingCursor):
    """Server-side binding, never prepared: the statement is parsed with its values apart and planned
    for them (an unnamed statement always gets a plan of its own)."""

    def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None, **kwargs: Any) -> Any:
        return super().execute(query, params, prepare=False, **kwargs)


class _LoggedCursor(CursorDebugWrapper):
    """Where queries are logged (DEBUG, tests), a prepared statement is logged as Django logs the
    others, its values in place: Django would read the text from the cursor, which a prepared
    statement's run does not set."""

    def execute(self, sql: Any, params: Any = None) -> Any:
        with self.debug_sql(self.db.ops.compose_sql(sql, params)):
            return self._execute_with_wrappers(sql, params, many=False, executor=self._execute)


def prepared_cursor(using: str = DEFAULT_DB_ALIAS) -> CursorWrapper:
    """A cursor of the connection (the default one unless ``using`` names another), as
    ``connection.cursor()`` gives (logged where queries are logged, errors as Django's), whose
    statements run prepared; a plain cursor when that is off."""
    if not settings.DATABASE_PREPARED_STATEMENTS:
        return connections[using].cursor()
    return _wrapped(_PreparingCursor, using)


def bound_cursor(using: str = DEFAULT_DB_ALIAS) -> CursorWrapper:
    """A cursor of the connection (the default one unless ``using`` names another) whose statements
    are sent with their values apart (server-side binding) and planned for those values every time,
    never prepared.

    For statements whose plan depends on their values but whose values are long: PostgreSQL then
    parses no literals (arrays of lexemes and weights, a vector) and psycopg quotes none. Measured on
    the keyword query: 0.1 to 0.3 ms less of PostgreSQL's CPU than the same statement bound in
    Python. Unnamed statements work behind any pooler, so this does not depend on
    DATABASE_PREPARED_STATEMENTS."""
    return _wrapped(_BoundCursor, using)


class _NoSmallint(IntDumper):
    """Python ints sent as ``integer`` where they fit, never ``smallint``.

    psycopg types a bound int by its size: an organization's id 7 went as ``'7'::smallint``. Its own
    indexes are partial, ``WHERE organization_id = 7`` (memories.search.tenant_indexes), and the
    planner drops a query's organization clause as already met only when it is written the same way,
    an ``integer``: with a ``smallint`` (or ``bigint``) it also read the organization's btree index
    and ANDed the two bitmaps, 58,632 rows to find 897: 4-7 ms of a 7-14 ms keyword query."""

    def upgrade(self, obj: int, format: PyFormat) -> Dumper:
        dumper = super().upgrade(obj, format)
        return self._int4_dumper if dumper is self._int2_dumper else dumper


class _NoSmallintBinary(IntBinaryDumper, _NoSmallint):
    """The same in the binary format."""


def _wrapped(cursor_class: type[ServerBindingCursor], using: str) -> CursorWrapper:
    connection = connections[using]
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    raw = connection.connection
    if raw.prepare_threshold is None:
        raw.prepare_threshold = _NEVER_BY_COUNT
    connection.validate_thread_sharing()
    cursor = cursor_class(raw)
    cursor.adapters.register_dumper(int, _NoSmallint)
    cursor.adapters.register_dumper(int, _NoSmallintBinary)
    return _LoggedCursor(cursor, connection) if connection.queries_logged else connection.make_cursor(cursor)
