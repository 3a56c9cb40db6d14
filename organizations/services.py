"""Writes for tenancy: organizations, repositories, memberships and API tokens.

Reads live in organizations/selectors.py. ``principal_for_token`` stays here although it mostly
reads: authenticating a token records its use (``last_used_at``), a write, and every interface
calls it as the one authentication step.
"""

from __future__ import annotations

import hmac
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils import timezone

from memory_platform.db.prepared import prepared_cursor
from memory_platform.exceptions import AuthenticationFailed, Conflict, NotFound, ValidationError
from organizations import selectors
from organizations.audit import audit_record
from organizations.models import (
    ApiToken,
    Membership,
    Organization,
    Repository,
    Role,
    User,
    hash_token_secret,
    slug_validator,
)
from organizations.principal import Principal

REPOSITORY_NAME_MAX = 200


def _validate_slug(slug: str, what: str) -> None:
    try:
        slug_validator(slug)
    except DjangoValidationError:
        raise ValidationError(
            f"'{slug}' is not a valid {what} slug: use 1-64 lowercase letters, digits and hyphens, "
            "starting and ending with a letter or digit"
        ) from None


def _validate_role(role: str) -> None:
    if role not in Role.values:
        raise ValidationError(f"unknown role '{role}'; use one of: {', '.join(Role.values)}")


@dataclass(frozen=True)
class IssuedToken:
    """A freshly created token. ``raw`` exists only here: it is never stored or shown again."""

    token: ApiToken
    raw: str


@transaction.atomic
def organization_create(*, slug: str, name: str = "", operator: str = "manage.py") -> Organization:
    _validate_slug(slug, "organization")
    try:
        with transaction.atomic():
            organization = Organization.objects.create(slug=slug, name=name or slug)
    except IntegrityError:
        raise Conflict(f"an organization with slug '{slug}' already exists; choose another slug") from None
    audit_record(
        principal=Principal.for_operator(organization, operator),
        action="organization.create",
        target_type="organization",
        target_id=organization.pk,
        data={"slug": slug, "name": organization.name},
    )
    return organization


def repository_get_or_create(*, principal: Principal, slug: str, name: str = "") -> Repository:
    """The repository with this slug, created if the organization has none yet."""
    repository, _ = repository_get_or_create_flagged(principal=principal, slug=slug, name=name)
    return repository


def repository_for_write(*, principal: Principal, slug: str, create: bool = False) -> Repository:
    """The repository a write names: an existing one, or a new one only when the writer asks for it."""
    if create:
        return repository_get_or_create(principal=principal, slug=slug)
    return selectors.repository_named(principal, slug)


@transaction.atomic
def repository_get_or_create_flagged(*, principal: Principal, slug: str, name: str = "") -> tuple[Repository, bool]:
    """As repository_get_or_create, and whether this call created the repository."""
    _validate_slug(slug, "repository")
    if not isinstance(name, str) or len(name) > REPOSITORY_NAME_MAX or "\x00" in name:
        raise ValidationError(
            f"name must be text of at most {REPOSITORY_NAME_MAX} characters, without NUL", details={"field": "name"}
        )
    repository = Repository.objects.filter(organization=principal.organization, slug=slug).first()
    if repository is not None:
        return repository, False
    principal.require(Role.AGENT, "creating a repository")
    repository, created = Repository.objects.get_or_create(
        organization=principal.organization, slug=slug, defaults={"name": name}
    )
    if created:
        audit_record(
            principal=principal,
            action="repository.create",
            target_type="repository",
            target_id=repository.pk,
            data={"slug": slug},
        )
    return repository, created


@dataclass(frozen=True)
class AddedMember:
    """The outcome of ``member_add``: the membership, and whether a new person has to set a password."""

    membership: Membership
    created_user: bool
    previous_role: str | None
    # The person has no password yet, and this caller may hand them a link to set one.
    needs_password: bool


@transaction.atomic
def membership_set(*, principal: Principal, user: User, role: str, reason: str = "") -> Membership:
    """Add ``user`` to the principal's organization with ``role``, or change their role there."""
    principal.require(Role.ADMIN, "managing members")
    _validate_role(role)
    existing = Membership.objects.select_for_update().filter(user=user, organization=principal.organization).first()
    previous_role = existing.role if existing is not None else None
    if existing is not None and previous_role == role and user.is_staff:
        return existing  # nothing changes, so nothing to record
    if previous_role == Role.ADMIN and role != Role.ADMIN:
        _keep_an_admin(principal, existing, "demote")
    membership, _ = Membership.objects.update_or_create(
        user=user, organization=principal.organization, defaults={"role": role}
    )
    if not user.is_staff:
        # Every member logs into the admin: what each one sees and does there follows the role
        # (readers look, curators curate, admins manage), so no role is kept out of it.
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    audit_record(
        principal=principal,
        action="membership.set",
        target_type="membership",
        target_id=membership.pk,
        reason=reason,
        data={"user": user.get_username(), "role": role, "previous_role": previous_role},
    )
    return membership


@transaction.atomic
def member_add(*, principal: Principal, username: str, role: str, create: bool = False, email: str = "") -> AddedMember:
    """Give a person a role in the principal's organization, creating their user if asked to."""
    principal.require(Role.ADMIN, "managing members")
    _validate_role(role)
    username = username.strip()
    user = User.objects.filter(username=username).first()
    if create:
        user = _user_create(principal=principal, username=username, email=email, existing=user)
    elif user is None:
        raise NotFound(f"no user '{username}'")
    elif email:
        # A person may belong to other organizations: one organization's admin does not edit them.
        raise ValidationError("an email is set only when creating a user")
    previous = Membership.objects.filter(user=user, organization=principal.organization).first()
    membership = membership_set(principal=principal, user=user, role=role)
    # Only the person's creator, or a platform administrator, may hand out a set-password link:
    # otherwise one organization's admin could take over another's member who has not set one yet.
    needs_password = not user.has_usable_password() and (create or principal.is_superuser)
    return AddedMember(
        membership=membership,
        created_user=create,
        previous_role=previous.role if previous is not None else None,
        needs_password=needs_password,
    )


def _user_create(*, principal: Principal, username: str, email: str, existing: User | None) -> User:
    if existing is not None:
        raise Conflict(f"user '{username}' already exists")
    if not username:
        raise ValidationError("a username is required")
    try:
        User._meta.get_field("username").run_validators(username)
        if email:
            validate_email(email)
    except DjangoValidationError as error:
        raise ValidationError(" ".join(error.messages)) from None
    # No password: the person sets their own through a one-time link (see organizations/password_links.py).
    user = User.objects.create_user(username=username, email=email, password=None, is_staff=True)
    audit_record(
        principal=principal,
        action="user.create",
        target_type="user",
        target_id=user.pk,
        data={"username": username, "email": email},
    )
    return user


@transaction.atomic
def membership_remove(*, principal: Principal, user: User, reason: str = "") -> None:
    """Take ``user`` out of the principal's organization. The user stays; only the membership row goes."""
    principal.require(Role.ADMIN, "managing members")
    membership = Membership.objects.select_for_update().filter(user=user, organization=principal.organization).first()
    if membership is None:
        raise NotFound(f"'{user.get_username()}' is not a member of {principal.organization.slug}")
    if membership.role == Role.ADMIN:
        _keep_an_admin(principal, membership, "remove")
    membership_id = membership.pk
    membership.delete()
    if user.is_staff and not user.is_superuser and not Membership.objects.filter(user=user).exists():
        # A member of no organization has nothing to see in the admin: their login ends with it.
        user.is_staff = False
        user.save(update_fields=["is_staff"])
    audit_record(
        principal=principal,
        action="membership.remove",
        target_type="membership",
        target_id=membership_id,
        reason=reason,
        data={"user": user.get_username(), "role": membership.role},
    )


def _keep_an_admin(principal: Principal, membership: Membership | None, verb: str) -> None:
    # Without an admin member nobody but the platform's operator could manage the organization's people.
    others = Membership.objects.filter(organization=principal.organization, role=Role.ADMIN)
    if membership is not None:
        others = others.exclude(pk=membership.pk)
    if not principal.is_superuser and not others.exists():
        raise Conflict(
            f"cannot {verb} the last admin of {principal.organization.slug}; make another member admin first"
        )


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
    _validate_role(role)
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
    """

    MAX_ENTRIES = 10_000

    def __init__(self) -> None:
        self._entries: dict[str, tuple[tuple[Any, ...], Principal]] = {}
        self._lock = threading.Lock()

    def get(self, key: str, state: tuple[Any, ...]) -> Principal | None:
        entry = self._entries.get(key)
        if entry is None or entry[0] != state:
            return None
        return entry[1]

    def put(self, key: str, state: tuple[Any, ...], principal: Principal) -> None:
        with self._lock:
            if key not in self._entries and len(self._entries) >= self.MAX_ENTRIES:
                self._entries.pop(next(iter(self._entries)), None)  # the oldest
            self._entries[key] = (state, principal)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


recent_principals = _RecentPrincipals()

# What a principal is built from, read on every request (see _RecentPrincipals).
_TOKEN_STATE_SQL = """
SELECT t.secret_hash, t.id, t.role, t.revoked_at, t.expires_at, o.slug, o.name,
       u.id, u.username, u.is_active, u.is_superuser,
       EXISTS (SELECT 1 FROM organizations_membership m
               WHERE m.user_id = t.user_id AND m.organization_id = t.organization_id)
FROM organizations_apitoken t
JOIN organizations_organization o ON o.id = t.organization_id
LEFT JOIN organizations_user u ON u.id = t.user_id
WHERE t.prefix = %s
"""  # noqa: S105 - SQL, not a password


def principal_for_token(raw_token: str) -> Principal:
    """Authenticate a bearer token. Every failure says what is wrong without saying what exists."""
    raw_token = raw_token.strip()
    prefix = ApiToken.split(raw_token)
    if prefix is None:
        raise AuthenticationFailed("malformed token: expected 'mp_<prefix>_<secret>' as the Bearer credential")
    with prepared_cursor() as cursor:
        cursor.execute(_TOKEN_STATE_SQL, [prefix])
        row = cursor.fetchone()
    key = hash_token_secret(raw_token)
    state = tuple(row[1:]) if row is not None and hmac.compare_digest(row[0], key) else None
    principal = recent_principals.get(key, state) if state is not None else None
    if principal is None or not _usable(principal):
        principal = _authenticate(prefix, raw_token)
        if state is not None:
            recent_principals.put(key, state, principal)
    if principal.token is not None:
        _touch_token(principal.token)
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


def _touch_token(token: ApiToken) -> None:
    # One write a minute at most per token, not one per request.
    now = timezone.now()
    resolution = timedelta(seconds=settings.API_TOKEN_LAST_USED_RESOLUTION_SECONDS)
    if token.last_used_at is None or now - token.last_used_at >= resolution:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
