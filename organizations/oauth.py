"""Turning an OAuth access token (issued by this platform's authorization server) into a Principal.

The token maps to the same Principal a static token does: the organization and role its grant
names (organizations.grants), the person who approved it, and the client it was issued to, so every
rule, audit event and rate limit applies unchanged. The role is never above the person's membership
as it stands now: a member demoted or removed after approving loses it at the next request.
A token is bound to the resource it was requested for (RFC 8707): one minted for another
audience, or for none, is refused.

Instead of its own authorization server the platform can trust an organization's
(``OAUTH_TRUSTED_ISSUER``): its access tokens are JWTs, checked against the issuer's keys (JWKS),
issuer and audience (this endpoint's URI); the person is the user named by
``OAUTH_TRUSTED_USERNAME_CLAIM``, acting in the organization ``OAUTH_TRUSTED_ORGANIZATION_CLAIM``
names (or their only one) with their membership's role.
"""

from __future__ import annotations

import hashlib
from typing import Any

import jwt
import requests
from django.conf import settings
from oauth2_provider.models import get_access_token_model

from memory_platform.exceptions import AuthenticationFailed
from organizations.grants import parse_grant
from organizations.models import Membership, Organization, Role, User
from organizations.principal import Principal


def principal_for_access_token(raw_token: str, resource: str | None) -> Principal:
    """The principal of an OAuth access token presented to ``resource`` (this server's URI for it)."""
    if settings.OAUTH_TRUSTED_ISSUER and raw_token.count(".") == 2:
        return _principal_for_trusted_jwt(raw_token, resource)
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


_jwks_clients: dict[str, jwt.PyJWKClient] = {}
_jwks_urls: dict[str, str] = {}


def _jwks_url() -> str:
    """OAUTH_TRUSTED_JWKS_URL, else the ``jwks_uri`` of the issuer's metadata (OIDC, then RFC 8414)."""
    issuer = settings.OAUTH_TRUSTED_ISSUER.rstrip("/")
    if settings.OAUTH_TRUSTED_JWKS_URL:
        return str(settings.OAUTH_TRUSTED_JWKS_URL)
    if issuer not in _jwks_urls:
        for document in ("openid-configuration", "oauth-authorization-server"):
            response = requests.get(f"{issuer}/.well-known/{document}", timeout=10)
            if response.ok and response.json().get("jwks_uri"):
                _jwks_urls[issuer] = str(response.json()["jwks_uri"])
                break
        else:
            raise AuthenticationFailed(f"cannot read the signing keys of {issuer}; set OAUTH_TRUSTED_JWKS_URL")
    return _jwks_urls[issuer]


def _signing_key(token: str) -> Any:
    url = _jwks_url()
    if url not in _jwks_clients:
        _jwks_clients[url] = jwt.PyJWKClient(url, cache_keys=True, lifespan=300, timeout=10)
    return _jwks_clients[url].get_signing_key_from_jwt(token).key


def _principal_for_trusted_jwt(raw_token: str, resource: str | None) -> Principal:
    """The principal of an access token the trusted external authorization server issued."""
    if resource is None:
        raise AuthenticationFailed("access tokens are taken by /mcp only")
    try:
        claims = jwt.decode(
            raw_token,
            _signing_key(raw_token),
            algorithms=["RS256", "PS256", "ES256", "EdDSA"],
            issuer=settings.OAUTH_TRUSTED_ISSUER,
            audience=resource,
            options={"require": ["exp", "iss", "aud", "sub"]},
        )
    except jwt.ExpiredSignatureError:
        raise AuthenticationFailed("this access token has expired; refresh it or sign in again") from None
    except jwt.InvalidAudienceError:
        raise AuthenticationFailed(f"this access token was not issued for {resource}") from None
    except (jwt.PyJWTError, jwt.PyJWKClientError) as error:
        raise AuthenticationFailed(f"invalid token ({error})") from None
    except requests.RequestException:
        raise AuthenticationFailed(f"{settings.OAUTH_TRUSTED_ISSUER} did not answer for its keys; retry") from None
    username = str(claims.get(settings.OAUTH_TRUSTED_USERNAME_CLAIM) or claims["sub"])
    user = User.objects.filter(username=username, is_active=True).first()
    if user is None:
        raise AuthenticationFailed(f"no active account '{username}' here; sign in to the admin once, or ask an admin")
    organization = _organization_of(user, claims.get(settings.OAUTH_TRUSTED_ORGANIZATION_CLAIM))
    role = _role_now(user, organization, Role.ADMIN)
    if role is None:
        raise AuthenticationFailed(f"{username} is not a member of {organization.slug}; ask an organization admin")
    client = str(claims.get("client_id") or claims.get("azp") or "external client")
    return Principal(organization=organization, role=role, user=user, client=client)


def _organization_of(user: User, named: Any) -> Organization:
    if named:
        organization = Organization.objects.filter(slug=str(named)).first()
        if organization is None:
            raise AuthenticationFailed(f"the organization this access token names, '{named}', does not exist")
        return organization
    organizations = list(Organization.objects.filter(memberships__user=user)[:2])
    if len(organizations) != 1:
        raise AuthenticationFailed(
            f"this access token names no organization ({settings.OAUTH_TRUSTED_ORGANIZATION_CLAIM} claim) and "
            f"{user.get_username()} belongs to {'several' if organizations else 'none'}"
        )
    return organizations[0]


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
