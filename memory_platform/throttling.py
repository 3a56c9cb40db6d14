"""Request rate per caller: per token, or per person for session logins, counted once for REST
and MCP together (a caller over the limit on one is over it on the other).

Counting is exact across processes, threads and machines: with Redis (REDIS_URL), by its atomic
INCR; without (the embedded default), by one upsert a request in PostgreSQL, which serializes them.
A file cache, read and written back by every process, lost counts under concurrency: four threads
at 140% of the limit were refused 2.5% of the time instead of 29%.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Protocol

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from memory_platform import metrics
from memory_platform.db.prepared import prepared_cursor
from memory_platform.db.transactions import savepoint_if_in_transaction


class WindowCounter(Protocol):
    """Counts a caller's requests in fixed windows."""

    def hit(self, key: str, window: int, duration: int) -> tuple[int, int]:
        """Count one request in ``window``: (the window's count with it, the previous window's count)."""

    def take_back(self, key: str, window: int) -> None:
        """Uncount a request refused after all."""


class RedisCounter:
    """Counters in the default cache, which is Redis when REDIS_URL is set: INCR is atomic."""

    def hit(self, key: str, window: int, duration: int) -> tuple[int, int]:
        current = f"{key}:{window}"
        try:
            count = cache.incr(current)
        except ValueError:  # the window's first request; another process may be creating it too
            count = 1 if cache.add(current, 1, timeout=2 * duration) else cache.incr(current)
        return count, int(cache.get(f"{key}:{window - 1}", 0))

    def take_back(self, key: str, window: int) -> None:
        with contextlib.suppress(ValueError):  # expired meanwhile: nothing to take back
            cache.decr(f"{key}:{window}")


_HIT_SQL = """
WITH hit AS (
  INSERT INTO memory_platform_ratecount (key, "window", count) VALUES (%s, %s, 1)
  ON CONFLICT (key, "window") DO UPDATE SET count = memory_platform_ratecount.count + 1
  RETURNING count)
SELECT (SELECT count FROM hit),
       coalesce((SELECT count FROM memory_platform_ratecount WHERE key = %s AND "window" = %s), 0)
"""
_FORGET_SQL = 'DELETE FROM memory_platform_ratecount WHERE key = %s AND "window" < %s'
_TAKE_BACK_SQL = 'UPDATE memory_platform_ratecount SET count = count - 1 WHERE key = %s AND "window" = %s'


class DatabaseCounter:
    """Counters in PostgreSQL (memory_platform.models.RateCount): one statement a request, each
    caller's windows older than the previous one deleted when its next window starts."""

    def hit(self, key: str, window: int, duration: int) -> tuple[int, int]:
        # In a caller's transaction (a test's), a savepoint keeps a failure here from failing it.
        with savepoint_if_in_transaction(), prepared_cursor() as cursor:
            cursor.execute(_HIT_SQL, [key, window, key, window - 1])
            count, previous = cursor.fetchone()
            if count == 1:
                cursor.execute(_FORGET_SQL, [key, window - 1])
        return int(count), int(previous)

    def take_back(self, key: str, window: int) -> None:
        with savepoint_if_in_transaction(), connection.cursor() as cursor:
            cursor.execute(_TAKE_BACK_SQL, [key, window])


def counter() -> WindowCounter:
    return RedisCounter() if settings.REDIS_URL else DatabaseCounter()


class Caller(Protocol):
    """What the throttle needs of whoever calls: a key to count its requests under (None: not counted)."""

    @property
    def rate_key(self) -> str | None: ...


class PrincipalRateThrottle(SimpleRateThrottle):
    """``API_THROTTLE_RATE`` requests per caller (e.g. "1200/min"); over it, 429 with Retry-After.

    A sliding window estimated from two fixed ones: the requests of the current window plus those
    of the previous one, weighted by how much of it the sliding window still covers. Counted by
    ``counter()`` (see the module docstring), every process of every machine together. DRF's own
    throttle rewrites a list of times, and under concurrency most counts were lost. Refused requests
    are not counted.
    """

    scope = "principal"

    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_RATE or None

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        # Who is calling, as its principal says (organizations.principal.Principal.rate_key); a
        # request without one was refused by authentication anyway.
        ident = getattr(request.auth, "rate_key", None)
        if not isinstance(ident, str):
            return None
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def allow_request(self, request: Any, view: Any) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        limit, duration = self.num_requests, self.duration
        self.now = now = self.timer()
        window = int(now // duration)
        counts = counter()
        count, previous = counts.hit(self.key, window, duration)
        covered = 1 - (now - window * duration) / duration  # of the previous window, by the sliding one
        if previous * covered + count <= limit:
            return True
        counts.take_back(self.key, window)
        self._wait = _seconds_until_allowed(now, duration, limit, previous, count - 1)
        metrics.THROTTLED.labels(self.scope).inc()
        return False

    def wait(self) -> float:
        return self._wait


def _seconds_until_allowed(now: float, duration: int, limit: int, previous: int, count: int) -> float:
    """When one more request fits: later in this window (the previous one weighing less), or in the next
    (this one's requests weighing less as it slides out): at most two windows away."""
    window_start = now // duration * duration
    if count + 1 <= limit and previous > 0:
        share = 1 - (limit - count - 1) / previous  # of this window that must have passed
        seconds = window_start + share * duration - now
    else:
        share = 1 - (limit - 1) / count if count else 0.0  # of the next window (this one's count weighing)
        seconds = window_start + duration + max(0.0, share) * duration - now
    return max(seconds, 0.0)


class RegistrationRateThrottle(PrincipalRateThrottle):
    """``OAUTH_REGISTRATION_RATE`` client registrations per address (anyone may register a client)."""

    scope = "registration"

    def get_rate(self) -> str | None:
        return settings.OAUTH_REGISTRATION_RATE or None


def retry_after(principal: Caller, throttle_class: type[PrincipalRateThrottle] = PrincipalRateThrottle) -> int | None:
    """For interfaces outside DRF (MCP over HTTP): count one request; seconds to wait if over the limit."""
    throttle = throttle_class()
    if throttle.rate is None or throttle.allow_request(_Caller(principal), None):
        return None
    return max(1, math.ceil(throttle.wait()))


class _Caller:
    """What the throttle reads of a request: who it is from."""

    def __init__(self, principal: Caller) -> None:
        self.auth = principal
