"""API tokens: issuing and revoking them, and turning a bearer token into the Principal it acts as
(checked on every request, its principal reused while the token's state is unchanged)."""

from __future__ import annotations

import hmac
import threading
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import transaction
from django.db.models import Model
from django.db.models.base import ModelState
from django.utils import timezone

from memory_platform.db.prepared import prepared_cursor
from memory_platform.exceptions import AuthenticationFailed, NotFound, ValidationError
from organizations import selectors
from organizations.audit import audit_record
from organizations.models import (
    TOKEN_SCHEME,
    ApiToken,
    Role,
    User,
    hash_token_secret,
)
from organizations.oauth import principal_for_access_token
from organizations.principal import Principal
from organizations.services import validate_role


@dataclass(frozen=True)
class IssuedToken:
    """A freshly created token. ``raw`` exists only here: it is never stored or shown again."""

    token: ApiToken
    raw: str


@transaction.atomic
def token_create(
    *,
    principal: Principal,
    role: str,
    name: str = "",
    user: User | None = None,
    expires_at: datetime | None = None,
) -> IssuedToken:
    principal.require(Role.ADMIN, "creating API tokens")
    validate_role(role)
    if expires_at is not None and expires_at <= timezone.now():
        raise ValidationError("expires_at must be in the future")
    is_member = user is not None and selectors.is_member(user, principal.organization)
    if user is not None and not user.is_superuser and not is_member:
        raise ValidationError(f"user '{user.get_username()}' is not a member of {principal.organization.slug}")
    raw, prefix, secret_hash = ApiToken.generate()
    token = ApiToken.objects.create(
        organization=principal.organization,
        name=name,
        role=role,
        user=user,
        prefix=prefix,
        secret_hash=secret_hash,
        expires_at=expires_at,
        created_by=principal.user,
    )
    audit_record(
        principal=principal,
        action="token.create",
        target_type="api_token",
        target_id=token.prefix,
        data={"role": role, "name": name, "user": user.get_username() if user else None},
    )
    return IssuedToken(token=token, raw=raw)


@transaction.atomic
def token_revoke(*, principal: Principal, prefix: str, reason: str = "") -> ApiToken:
    principal.require(Role.ADMIN, "revoking API tokens")
    prefix = prefix.removeprefix("mp_").split("_", 1)[0]
    if not prefix.isalnum():
        raise NotFound(f"no token with prefix '{prefix}' in {principal.organization.slug}")
    token = ApiToken.objects.select_for_update().filter(organization=principal.organization, prefix=prefix).first()
    if token is None:
        raise NotFound(f"no token with prefix '{prefix}' in {principal.organization.slug}")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        audit_record(
            principal=principal, action="token.revoke", target_type="api_token", target_id=token.prefix, reason=reason
        )
    return token


class _RecentPrincipals:
    """The principals this process built for tokens, used again while their token's state is unchanged.

    Authenticating a token through the ORM (the token, its organization and user as model
    instances, then the membership of a personal token) costs about 0.7 ms of CPU, of the 5-20
    a request costs. Every request still reads its token's state (role, revocation, expiry, its
    user's standing and membership, the names a principal shows) in one small query, so a revoked
    token, a deactivated user or a removed member is refused at once by every process; only when
    that state matches what the principal was built from is the principal used again.

    Each caller gets a principal of its own (its organization, user and token copied): requests run
    on many threads, and a principal's model instances are theirs to change (a token's last use, a
    renamed organization saved by an admin) without another request seeing it.
    """

    MAX_ENTRIES = 10_000

    def __init__(self) -> None:
        self._entries: dict[str, tuple[tuple[Any, ...], Principal]] = {}
        self._lock = threading.Lock()

    def get(self, key: str, state: tuple[Any, ...]) -> Principal | None:
        entry = self._entries.get(key)
        if entry is None or entry[0] != state:
            return None
        return _own_copy(entry[1])

    def put(self, key: str, state: tuple[Any, ...], principal: Principal) -> None:
        with self._lock:
            if key not in self._entries and len(self._entries) >= self.MAX_ENTRIES:
                self._entries.pop(next(iter(self._entries)), None)  # the oldest
            self._entries[key] = (state, _own_copy(principal))

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


ModelT = TypeVar("ModelT", bound=Model)


def _own_copy(principal: Principal) -> Principal:
    """The principal with model instances nobody else holds: their fields copied, relations re-pointed
    at the copies (8 us, where copy.copy of the three costs 70)."""
    organization = _copied(principal.organization)
    user = _copied(principal.user) if principal.user is not None else None
    token = _copied(principal.token) if principal.token is not None else None
    if token is not None:
        token._state.fields_cache.update(organization=organization, user=user)
    return replace(principal, organization=organization, user=user, token=token)


def _copied(instance: ModelT) -> ModelT:
    """A loaded model instance's fields in a new instance, with no related object cached."""
    fresh = instance.__class__.__new__(instance.__class__)
    fresh.__dict__.update(instance.__dict__)
    fresh._state = ModelState()
    fresh._state.db, fresh._state.adding = instance._state.db, instance._state.adding
    return fresh


recent_principals = _RecentPrincipals()


# What a principal is built from, read on every request (see _RecentPrincipals), and when the token
# was last used (not part of that state: it changes once a minute).
_TOKEN_STATE_SQL = """
SELECT t.secret_hash, t.id, t.role, t.revoked_at, t.expires_at, o.slug, o.name,
       u.id, u.username, u.is_active, u.is_superuser,
       EXISTS (SELECT 1 FROM organizations_membership m
               WHERE m.user_id = t.user_id AND m.organization_id = t.organization_id),
       t.last_used_at
FROM organizations_apitoken t
JOIN organizations_organization o ON o.id = t.organization_id
LEFT JOIN organizations_user u ON u.id = t.user_id
WHERE t.prefix = %s
"""  # noqa: S105 - SQL, not a password


BEARER_HINT = "send 'Authorization: Bearer <token>'"


def bearer_token(header: str) -> str | None:
    """The token of an ``Authorization`` header (``Bearer <token>``), for every interface; None when
    there is no header. Another scheme, or an empty credential, raises AuthenticationFailed saying
    what to send."""
    scheme, _, credential = header.strip().partition(" ")
    if not scheme:
        return None
    if scheme.lower() != "bearer":
        raise AuthenticationFailed(f"unsupported authorization scheme '{scheme}'; {BEARER_HINT}")
    if not credential.strip():
        raise AuthenticationFailed(f"the Bearer credential is empty; {BEARER_HINT}")
    return credential.strip()


def principal_for_token(raw_token: str, resource: str | None = None) -> Principal:
    """Authenticate a bearer token. Every failure says what is wrong without saying what exists.

    ``resource`` is this server's URI of the endpoint called, where OAuth access tokens are accepted
    (organizations.oauth: they are bound to it); elsewhere only API tokens are."""
    raw_token = raw_token.strip()
    prefix = ApiToken.split(raw_token)
    if prefix is None and resource is not None and not raw_token.startswith(f"{TOKEN_SCHEME}_"):
        return principal_for_access_token(raw_token, resource)
    if prefix is None:
        raise AuthenticationFailed("malformed token: expected 'mp_<prefix>_<secret>' as the Bearer credential")
    with prepared_cursor() as cursor:
        cursor.execute(_TOKEN_STATE_SQL, [prefix])
        row = cursor.fetchone()
    key = hash_token_secret(raw_token)
    state = tuple(row[1:-1]) if row is not None and hmac.compare_digest(row[0], key) else None
    principal = recent_principals.get(key, state) if state is not None else None
    if principal is None or not _usable(principal):
        principal = _authenticate(prefix, raw_token)
        if state is not None:
            recent_principals.put(key, state, principal)
    if principal.token is not None:
        _touch_token(principal.token, row[-1])  # a token authenticated: its row was read
    return principal


def _usable(principal: Principal) -> bool:
    """A remembered principal whose token has not expired since (the state holds the expiry, not the time)."""
    token = principal.token
    return token is not None and (token.expires_at is None or token.expires_at > timezone.now())


def _authenticate(prefix: str, raw_token: str) -> Principal:
    token = ApiToken.objects.select_related("organization", "user").filter(prefix=prefix).first()
    if token is None or not token.matches(raw_token):
        raise AuthenticationFailed("invalid token")
    if token.revoked_at is not None:
        raise AuthenticationFailed("this token has been revoked; ask an organization admin for a new one")
    if token.expires_at is not None and token.expires_at <= timezone.now():
        raise AuthenticationFailed("this token has expired; ask an organization admin for a new one")
    user = token.user
    if user is not None:
        _check_token_user(token, user)
    return Principal(
        organization=token.organization,
        role=token.role,
        user=user,
        token=token,
        is_superuser=bool(user and user.is_superuser),
    )


def _check_token_user(token: ApiToken, user: User) -> None:
    # A personal token acts for its person: it ends when they leave or are deactivated.
    if not user.is_active:
        raise AuthenticationFailed(
            f"the user of this token, {user.get_username()}, is deactivated; ask an organization admin"
        )
    if not user.is_superuser and not selectors.is_member(user, token.organization):
        raise AuthenticationFailed(
            f"the user of this token, {user.get_username()}, is no longer a member of "
            f"{token.organization.slug}; ask an organization admin"
        )


def _touch_token(token: ApiToken, last_used_at: datetime | None) -> None:
    # One write a minute at most per token, not one per request (``last_used_at`` as the database has it).
    now = timezone.now()
    resolution = timedelta(seconds=settings.API_TOKEN_LAST_USED_RESOLUTION_SECONDS)
    if last_used_at is None or now - last_used_at >= resolution:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        last_used_at = now
    token.last_used_at = last_used_at
