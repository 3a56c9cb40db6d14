"""Who is calling: a bearer token (the same tokens as MCP) or a logged-in person.

Both end in a ``Principal`` on ``request.auth``; views hand it to the services, which enforce
roles. The request body never picks the tenant.
"""

from __future__ import annotations

from typing import Any

from rest_framework import authentication, exceptions, permissions
from rest_framework.request import Request

from memory_platform import logs
from memory_platform.exceptions import DomainError
from organizations.principal import Principal
from organizations.selectors import organization_by_slug, organizations_of_user, principal_for_user
from organizations.tokens import bearer_token, principal_for_token

ORGANIZATION_HEADER = "X-Organization"


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer mp_<prefix>_<secret>``."""

    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, Principal] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        try:
            credential = bearer_token(header)
            if credential is None:
                return None
            principal = principal_for_token(credential)
        except DomainError as error:
            raise exceptions.AuthenticationFailed(error.message) from error
        logs.bind_caller(principal.organization.slug, principal)
        return principal.user, principal

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="memory-platform"'


class SessionPrincipalAuthentication(authentication.SessionAuthentication):
    """A person logged in through the admin, acting in one of their organizations.

    A member of one organization acts in it; anyone else names it in the ``X-Organization`` header.
    Unsafe methods need the CSRF token, as everywhere in Django.
    """

    def authenticate(self, request: Request) -> tuple[Any, Principal] | None:
        result = super().authenticate(request)
        if result is None:
            return None
        user = result[0]
        slug = request.headers.get(ORGANIZATION_HEADER, "").strip()
        if slug:
            organization = organization_by_slug(slug)
            if organization is None:
                # Said exactly as for an organization that exists but is not this person's.
                raise exceptions.AuthenticationFailed(f"organization '{slug}' not found")
        else:
            organizations = organizations_of_user(user, limit=2)
            if len(organizations) != 1:
                raise exceptions.AuthenticationFailed(
                    f"say which organization to act in with the {ORGANIZATION_HEADER} header "
                    f"(you belong to {'several' if organizations else 'none'})"
                )
            organization = organizations[0]
        try:
            principal = principal_for_user(user=user, organization=organization)
        except DomainError as error:
            # Not a member: the organization does not exist as far as this person can tell.
            raise exceptions.AuthenticationFailed(f"organization '{organization.slug}' not found") from error
        logs.bind_caller(principal.organization.slug, principal)
        return user, principal


class HasPrincipal(permissions.BasePermission):
    """Every endpoint needs a caller; what the caller may do is the services' business."""

    def has_permission(self, request: Request, view: Any) -> bool:
        if isinstance(request.auth, Principal):
            return True
        raise exceptions.NotAuthenticated("authentication required: send 'Authorization: Bearer <token>'")


def principal_of(request: Request) -> Principal:
    principal = request.auth
    if not isinstance(principal, Principal):  # HasPrincipal guarantees it; a view without it is a bug
        raise exceptions.NotAuthenticated()
    return principal
