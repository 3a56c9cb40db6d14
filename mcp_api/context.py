"""Who is calling: the principal of the current MCP request (HTTP) or process (stdio).

Over stdio the principal is looked up again before each request (a token revoked mid-session stops
working at once), so the session sets a function returning the current one rather than a value.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable

from memory_platform.exceptions import AuthenticationFailed
from organizations.principal import Principal

PrincipalSource = Principal | Callable[[], Principal | None] | None
_current: contextvars.ContextVar[PrincipalSource] = contextvars.ContextVar("mcp_principal", default=None)


def set_principal(principal: PrincipalSource) -> contextvars.Token[PrincipalSource]:
    return _current.set(principal)


def reset_principal(token: contextvars.Token[PrincipalSource]) -> None:
    _current.reset(token)


def current_principal() -> Principal:
    source = _current.get()
    principal = source() if callable(source) else source
    if principal is None:
        raise AuthenticationFailed("no authenticated principal for this MCP call")
    return principal
