"""Turning an OAuth access token (issued by this platform's authorization server) into a Principal.

The token maps to the same Principal a static token does: the organization and role its grant
names (organizations.grants), the person who approved it, and the client it was issued to, so every
rule, audit event and rate limit applies unchanged. The role is never above the person's membership
as it stands now: a member demoted or removed after approving loses it at the next request.
A token is bound to the resource it was requested for (RFC 8707): one minted for another
audience, or for none, is refused.
"""

from __future__ import annotations

import hashlib

from oauth2_provider.models import get_access_token_model

from memory_platform.exceptions import AuthenticationFailed
from organizations.grants import parse_grant
from organizations.models import Membership, Organization, Role, User
from organizations.principal import Principal


def principal_for_access_token(raw_token: str, resource: str | None) -> Principal:
    """The principal of an OAuth access token presented to ``resource`` (this server's URI for it)."""
    checksum = hashlib.sha256(raw_token.encode()).hexdigest()
    token = (
        get_access_token_model().objects.select_related("application", "user").filter(token_checksum=checksum).first()
    )
    if token is None:
        raise AuthenticationFailed("invalid token")
    if token.is_expired():
        raise AuthenticationFailed("this access token has expired; refresh it or sign in again")
    if resource is None or not token.resource or not token.allows_audience(resource):
        raise AuthenticationFailed(f"this access token was not issued for {resource or 'this endpoint'}")
    grant = parse_grant(token.scope)
    user = token.user
    if grant is None or user is None:
        raise AuthenticationFailed("this access token grants no organization; sign in again")
    if not user.is_active:
        raise AuthenticationFailed(f"{user.get_username()} is deactivated; ask an organization admin")
    organization = Organization.objects.filter(slug=grant.organization).first()
    if organization is None:
        raise AuthenticationFailed("the organization this access token was granted for no longer exists")
    role = _role_now(user, organization, grant.role)
    if role is None:
        raise AuthenticationFailed(
            f"{user.get_username()} is no longer a member of {organization.slug}; ask an organization admin"
        )
    client = token.application.name or token.application.client_id if token.application else "unknown client"
    return Principal(organization=organization, role=role, user=user, is_superuser=False, client=client)


def _role_now(user: User, organization: Organization, granted: str) -> str | None:
    """The granted role, lowered to the person's membership as it stands (None: not a member)."""
    current: str | None = Role.ADMIN
    if not user.is_superuser:
        current = Membership.objects.filter(user=user, organization=organization).values_list("role", flat=True).first()
    if current is None:
        return None
    if granted not in Role.values:
        return None
    return granted if Role.rank(granted) <= Role.rank(current) else current
