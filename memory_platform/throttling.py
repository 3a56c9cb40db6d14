"""Request rate per caller: per token, or per person for session logins, counted once for REST
and MCP together (a caller over the limit on one is over it on the other)."""

from __future__ import annotations

import contextlib
import math
from typing import Any

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from organizations.principal import Principal


class PrincipalRateThrottle(SimpleRateThrottle):
    """``API_THROTTLE_RATE`` requests per caller (e.g. "1200/min"); over it, 429 with Retry-After.

    A sliding window estimated from two fixed ones: the requests of the current window plus those
    of the previous one, weighted by how much of it the sliding window still covers. Counters live
    in the default cache, so every web process (and with Redis, every machine) counts one caller
    together. Redis increments them atomically; the file cache of a machine without Redis reads and
    writes, so two requests at the same instant may count once (in the caller's favour, never
    against it). DRF's own throttle rewrites a list of times, and under concurrency most counts were
    lost. Refused requests are not counted.
    """

    scope = "principal"

    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_RATE or None

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        principal = request.auth
        if not isinstance(principal, Principal):
            return None  # refused by authentication anyway
        if principal.token is not None:
            ident = f"token:{principal.token.prefix}"
        elif principal.user is not None:
            ident = f"user:{principal.user.pk}"
        else:
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
        current = f"{self.key}:{window}"
        try:
            count = self.cache.incr(current)
        except ValueError:  # the window's first request; another process may be creating it too
            count = 1 if self.cache.add(current, 1, timeout=2 * duration) else self.cache.incr(current)
        previous = int(self.cache.get(f"{self.key}:{window - 1}", 0))
        covered = 1 - (now - window * duration) / duration  # of the previous window, by the sliding one
        if previous * covered + count <= limit:
            return True
        with contextlib.suppress(ValueError):  # expired meanwhile: nothing to take back
            self.cache.decr(current)
        self._wait = _seconds_until_allowed(now, duration, limit, previous, count - 1)
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


def retry_after(principal: Principal) -> int | None:
    """For interfaces outside DRF (MCP over HTTP): count one request; seconds to wait if over the limit."""
    throttle = PrincipalRateThrottle()
    if throttle.rate is None or throttle.allow_request(_Caller(principal), None):
        return None
    return max(1, math.ceil(throttle.wait()))


class _Caller:
    """What the throttle reads of a request: who it is from."""

    def __init__(self, principal: Principal) -> None:
        self.auth = principal
