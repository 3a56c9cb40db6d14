"""Searches read from a streaming replica when one is configured (DATABASE_REPLICA_URL), and only
when it can answer them as the primary would for the organization asking.

A search reads a lot and writes nothing; a replica takes that load off the primary. It may lag, so
a search goes to it only when:

- the replica has replayed the organization's last write: every write of memories or code records,
  after its commit, the primary's WAL position for its organization (``written``) in the cache, and
  a search asks the replica, in the one statement that checks it (reused by a process's searches
  for CHECK_REUSE_SECONDS while it covers their writes), whether it has replayed that far.
  An agent that writes and then searches finds what it wrote, whichever web process answers (with
  REDIS_URL; the local cache holds the position for its own process only);
- it is no further behind than REPLICA_MAX_LAG_SECONDS (what other organizations' writes, a
  worker's say, may take to show up);
- it answered the last time: a replica that failed is left alone for REPLICA_RETRY_SECONDS, and the
  search that met the failure is run again on the primary. A search never fails because of the
  replica.

Everything else (writes, what a principal may see, memory-get) reads the primary. ``lag_tolerant``
runs a search with the replica as the database its reads go to: ``ReadRouter`` sends the ORM's
reads there, and the search's own SQL asks ``read_connection()``. memory_platform_search_reads
counts where searches read, and why the primary when it was.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, DatabaseError, OperationalError, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from memory_platform.metrics import SEARCH_READS

logger = logging.getLogger(__name__)

REPLICA = "replica"
_reading: ContextVar[str] = ContextVar("memory_platform_reading", default=DEFAULT_DB_ALIAS)
_down_until = 0.0
T = TypeVar("T")

# What the replica says of itself: whether it is one, how far it has replayed, and how far behind it
# is. A replica that has replayed all it received is not behind, however long ago its last
# transaction was.
_CHECK_SQL = """
SELECT pg_is_in_recovery(),
       COALESCE(pg_last_wal_replay_lsn()::text, '0/0'),
       CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
            ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0) END
"""
# A check this recent answers the next searches of the process (about a millisecond each saved): its
# replayed position only grows, so one that already covers an organization's last write still does;
# one that does not is asked again at once. Its lag and role are this much older at most.
CHECK_REUSE_SECONDS = 0.25


@dataclass(frozen=True)
class _Checked:
    at: float  # time.monotonic()
    in_recovery: bool
    replayed: int  # WAL position
    lag: float  # seconds


_checked: _Checked | None = None


def _position(text: str) -> int:
    """A WAL position ("16/B374D848") as a number."""
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


def _check(*, reuse: bool) -> _Checked:
    global _checked  # noqa: PLW0603 - the process's view of the replica
    now = time.monotonic()
    if reuse and _checked is not None and now - _checked.at <= CHECK_REUSE_SECONDS:
        return _checked
    with connections[REPLICA].cursor() as cursor:
        cursor.execute(_CHECK_SQL)
        in_recovery, replayed, lag = cursor.fetchone()
    _checked = _Checked(now, bool(in_recovery), _position(replayed), float(lag))
    return _checked


class ReadRouter:
    """The ORM's reads go where ``lag_tolerant`` sends them (the primary outside it); writes and
    migrations always to the primary."""

    # Named, never None: Django would otherwise send an object read from the replica back there.
    def db_for_read(self, model: Any, **hints: Any) -> str:
        return _reading.get()

    def db_for_write(self, model: Any, **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool | None:
        return True  # the replica holds the primary's rows: objects read from either are the same

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool | None:
        return db != REPLICA


def configured() -> bool:
    return REPLICA in settings.DATABASES


def reading() -> str:
    """The alias of the database this search reads from."""
    return _reading.get()


def read_connection() -> BaseDatabaseWrapper:
    return connections[_reading.get()]


def _key(organization_id: int) -> str:
    return f"replica:written:{organization_id}"


def written(organization_id: int) -> None:
    """After a transaction that wrote the organization's memories or code commits: the primary's WAL
    position, which a replica must have replayed before it answers this organization's searches.
    (Taken now, not at the commit: a later position, never an earlier one, whatever commits meanwhile.)"""
    if not configured():
        return

    def record() -> None:
        try:
            with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
                cursor.execute("SELECT pg_current_wal_lsn()::text")
                (position,) = cursor.fetchone()
            cache.set(_key(organization_id), position, timeout=settings.REPLICA_WRITTEN_SECONDS)
        except Exception:  # the write is done; the replica's searches then only lag a little
            logger.exception("the WAL position of organization %s's write was not recorded", organization_id)

    transaction.on_commit(record)


def _primary_because(reason: str) -> str:
    SEARCH_READS.labels(database="primary", reason=reason).inc()
    return DEFAULT_DB_ALIAS


def _choose(organization_id: int) -> str:
    if not configured():
        return DEFAULT_DB_ALIAS
    reason = _why_not_the_replica(organization_id)
    if reason:
        return _primary_because(reason)
    SEARCH_READS.labels(database="replica", reason="").inc()
    return REPLICA


def _why_not_the_replica(organization_id: int) -> str:
    """Why the replica may not answer this organization's search now ("" when it may)."""
    if time.monotonic() < _down_until:
        return "replica failed"
    try:
        position = cache.get(_key(organization_id)) or "0/0"
    except Exception:  # the cache (Redis) is down: which writes the replica lacks is not known
        logger.warning("the write positions are unknown (the cache failed): searches read the primary")
        return "write positions unknown"
    needed = _position(position)
    checked = _check(reuse=True)
    if checked.in_recovery and checked.replayed < needed:
        checked = _check(reuse=False)  # it may have replayed the write since
    if not checked.in_recovery:
        return "not a replica"
    if checked.replayed < needed:
        return "behind the organization's writes"
    if checked.lag > settings.REPLICA_MAX_LAG_SECONDS:
        return "lagging"
    return ""


def _failed(error: DatabaseError) -> None:
    global _down_until, _checked  # noqa: PLW0603 - the process's view of the replica
    _down_until = time.monotonic() + settings.REPLICA_RETRY_SECONDS
    _checked = None
    logger.warning(
        "the read replica failed (%s): searches read the primary for %d s", error, settings.REPLICA_RETRY_SECONDS
    )
    connections[REPLICA].close()


def lag_tolerant(organization_id: int, search: Callable[[], T]) -> T:
    """``search()`` reading from the replica when it may answer this organization (see the module),
    else from the primary; run again on the primary if the replica fails under it."""
    try:
        alias = _choose(organization_id)
    except DatabaseError as error:
        _failed(error)
        alias = _primary_because("replica failed")
    if alias == DEFAULT_DB_ALIAS:
        return search()
    token = _reading.set(alias)
    try:
        return search()
    except OperationalError as error:
        # The replica went away, or cancelled the search to replay (a conflict with recovery): the
        # primary answers. (A mistake in the search itself is no OperationalError: it is raised.)
        if not connections[REPLICA].is_usable():
            _failed(error)
        SEARCH_READS.labels(database="primary", reason="replica failed").inc()
    finally:
        _reading.reset(token)
    return search()


def status() -> dict[str, Any] | None:
    """What /healthz and /metrics say of the replica: None when there is none. A replica that failed
    is not asked again before REPLICA_RETRY_SECONDS (a health check must not wait on its timeout)."""
    if not configured():
        return None
    if time.monotonic() < _down_until:
        return {"state": "down"}
    try:
        checked = _check(reuse=False)
    except DatabaseError as error:
        _failed(error)
        return {"state": "down", "error": str(error).strip().splitlines()[0]}
    state = "ok" if checked.in_recovery and checked.lag <= settings.REPLICA_MAX_LAG_SECONDS else "lagging"
    if not checked.in_recovery:
        state = "not a replica"
    return {"state": state, "lag_seconds": round(checked.lag, 3)}
