"""The principal: who is acting, in which organization, with which role.

Every service and selector receives one. Interfaces build it once from the request (a bearer
token, a logged-in user) and never let the request body pick the tenant.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_platform.exceptions import NotFound, PermissionDenied
from organizations.models import ApiToken, Organization, Role, User


@dataclass(frozen=True)
class Principal:
    organization: Organization
    role: str
    user: User | None = None
    token: ApiToken | None = None
    is_superuser: bool = False
    # Set for people acting on the host itself (manage.py), who hold no token or login.
    operator: str | None = None
    # The OAuth client acting for ``user`` with an access token it was granted (its name).
    client: str | None = None

    @classmethod
    def for_operator(cls, organization: Organization, name: str = "manage.py") -> Principal:
        """Whoever runs commands on the server's host is its platform administrator."""
        return cls(organization=organization, role=Role.ADMIN, is_superuser=True, operator=name)

    def __post_init__(self) -> None:
        if self.role not in Role.values:
            raise ValueError(f"unknown role {self.role!r}")

    @property
    def label(self) -> str:
        """How this principal appears in versions and audit events."""
        if self.token is not None:
            owner = f" for {self.token.user.get_username()}" if self.token.user else ""
            return f"token {self.token.display}{owner}"
        if self.client is not None and self.user is not None:
            return f"oauth client {self.client} for {self.user.get_username()}"
        if self.user is not None:
            return f"user {self.user.get_username()}"
        return f"operator ({self.operator or 'system'})"

    @property
    def rate_key(self) -> str | None:
        """Whom the rate limit counts this principal's requests against: its token, else its person."""
        if self.token is not None:
            return f"token:{self.token.prefix}"
        if self.client is not None and self.user is not None:
            return f"oauth:{self.client}:{self.user.pk}"
        if self.user is not None:
            return f"user:{self.user.pk}"
        return None

    def has_role(self, role: str) -> bool:
        return self.is_superuser or Role.rank(self.role) >= Role.rank(role)

    def require(self, role: str, action: str) -> None:
        if not self.has_role(role):
            raise PermissionDenied(
                f"{action} needs the {role} role or higher; this {'token' if self.token else 'account'} "
                f"has the {self.role} role in {self.organization.slug}. Ask an organization admin."
            )

    def check_organization(self, slug: str | None) -> None:
        """Honour an ``organization`` argument: it must name the principal's own organization."""
        if slug and slug != self.organization.slug:
            raise NotFound(f"organization '{slug}' not found; this token belongs to '{self.organization.slug}'")
