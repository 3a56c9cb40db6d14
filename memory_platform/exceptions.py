"""The domain's one exception hierarchy.

Services and selectors raise these; each interface (MCP, REST, admin, commands) translates them
once. Messages are written for the caller: they say what went wrong and what to do instead.
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    code = "error"

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class ValidationError(DomainError):
    code = "invalid"


class NotFound(DomainError):
    """Raised alike for objects that do not exist and objects of another organization."""

    code = "not_found"


class PermissionDenied(DomainError):
    code = "permission_denied"


class Locked(PermissionDenied):
    code = "locked"


class Conflict(DomainError):
    code = "conflict"


class AuthenticationFailed(DomainError):
    code = "unauthenticated"


class SearchUnavailable(DomainError):
    """A search mode cannot run right now (the embedding provider is down): retry shortly."""

    code = "unavailable"


# How long a client should wait before retrying when the database does not answer.
DATABASE_RETRY_AFTER_SECONDS = 5
DATABASE_UNAVAILABLE = "the database is unavailable right now; nothing was changed. Retry in a few seconds."


def database_unavailable(error: BaseException) -> bool:
    """Whether ``error`` means the database cannot be reached (down, restarting, the pool exhausted),
    as opposed to a query it refused."""
    from django.db import InterfaceError, OperationalError

    return isinstance(error, OperationalError | InterfaceError)
