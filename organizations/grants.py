"""What an OAuth access token grants: one organization and one role, carried in its scope.

A person approving a client on the consent page picks the organization and the role (never above
their membership); the choice is written into the grant's scope (``mcp organization:<slug>
role:<role>``), which the authorization server copies into every access and refresh token it
issues from that grant. Reading it back is the only way a token names its tenant.
"""

from __future__ import annotations

from dataclasses import dataclass

BASE_SCOPE = "mcp"
ORGANIZATION_PREFIX = "organization:"
ROLE_PREFIX = "role:"


@dataclass(frozen=True)
class Grant:
    organization: str  # slug
    role: str


def grant_scope(organization: str, role: str) -> str:
    return f"{BASE_SCOPE} {ORGANIZATION_PREFIX}{organization} {ROLE_PREFIX}{role}"


def is_grant_scope(scope: str) -> bool:
    return scope.startswith((ORGANIZATION_PREFIX, ROLE_PREFIX))


def parse_grant(scope: str) -> Grant | None:
    """The organization and role a token's scope grants, or None when it grants none (or two)."""
    organizations = [
        part.removeprefix(ORGANIZATION_PREFIX) for part in scope.split() if part.startswith(ORGANIZATION_PREFIX)
    ]
    roles = [part.removeprefix(ROLE_PREFIX) for part in scope.split() if part.startswith(ROLE_PREFIX)]
    if len(organizations) != 1 or len(roles) != 1:
        return None
    return Grant(organization=organizations[0], role=roles[0])
