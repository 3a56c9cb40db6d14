"""Request rate per caller: per token, or per person for session logins, counted once for REST
and MCP together (a caller over the limit on one is over it on the other)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from organizations.principal import Principal


class PrincipalRateThrottle(SimpleRateThrottle):
    """``API_THROTTLE_RATE`` requests per caller (e.g. "1200/min"); over it, 429 with Retry-After.

    Counts live in the default cache: Redis when REDIS_URL is set (shared by every worker),
    else the process's memory.
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


def retry_after(principal: Principal) -> int | None:
    """For interfaces outside DRF (MCP over HTTP): count one request; seconds to wait if over the limit."""
    throttle = PrincipalRateThrottle()
    if throttle.rate is None or throttle.allow_request(_Caller(principal), None):
        return None
    return max(1, round(throttle.wait() or 1))


class _Caller:
    """What the throttle reads of a request: who it is from."""

    def __init__(self, principal: Principal) -> None:
        self.auth = principal
