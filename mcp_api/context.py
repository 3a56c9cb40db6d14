"""Who is calling: the principal of the current MCP request (HTTP) or process (stdio)."""

from __future__ import annotations

import contextvars

from memory_platform.exceptions import AuthenticationFailed
from organizations.principal import Principal

_current: contextvars.ContextVar[Principal | None] = contextvars.ContextVar("mcp_principal", default=None)


def set_principal(principal: Principal | None) -> contextvars.Token[Principal | None]:
    return _current.set(principal)


def reset_principal(token: contextvars.Token[Principal | None]) -> None:
    _current.reset(token)


def current_principal() -> Principal:
    principal = _current.get()
    if principal is None:
        raise AuthenticationFailed("no authenticated principal for this MCP call")
    return principal
