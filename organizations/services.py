"""Writes for tenancy: organizations, repositories, memberships and API tokens.

Reads live in organizations/selectors.py. ``principal_for_token`` stays here although it mostly
reads: authenticating a token records its use (``last_used_at``), a write, and every interface
calls it as the one authentication step.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from memory_platform.bulk import copy_values
from memory_platform.exceptions import Conflict, DomainError, NotFound, ValidationError
from organizations import selectors
from organizations.audit import audit_record, audit_values
from organizations.models import (
    AuditEvent,
    Membership,
    Organization,
    Repository,
    Role,
    User,
    slug_validator,
)
from organizations.principal import Principal

REPOSITORY_NAME_MAX = 200


def validate_slug(slug: str, what: str) -> None:
    try:
        slug_validator(slug)
    except DjangoValidationError:
        raise ValidationError(
            f"'{slug}' is not a valid {what} slug: use 1-64 lowercase letters, digits and hyphens, "
            "starting and ending with a letter or digit"
        ) from None


def validate_role(role: str) -> None:
    if role not in Role.values:
        raise ValidationError(f"unknown role '{role}'; use one of: {', '.join(Role.values)}")


@transaction.atomic
def organization_create(*, slug: str, name: str = "", operator: str = "manage.py") -> Organization:
    validate_slug(slug, "organization")
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


def repositories_for_write(
    *, principal: Principal, slugs: Collection[str], create: Collection[str] = ()
) -> tuple[dict[str, Repository], dict[str, DomainError]]:
    """repository_for_write for many slugs at once (a batch of writes): the repositories by slug,
    the missing ones named in ``create`` made together (one statement, an audit event each), and
    for each slug that cannot be had, the error repository_for_write would raise for it."""
    found = {r.slug: r for r in Repository.objects.filter(organization=principal.organization, slug__in=slugs)}
    errors: dict[str, DomainError] = {}
    wanted: list[str] = []
    for slug in sorted(set(slugs) - set(found)):
        try:
            if slug not in create:
                selectors.repository_named(principal, slug)  # refuses it, naming the known ones
            validate_slug(slug, "repository")
            principal.require(Role.AGENT, "creating a repository")
        except DomainError as error:
            errors[slug] = error
        else:
            wanted.append(slug)
    if not wanted:
        return found, errors
    with transaction.atomic(), connection.cursor() as cursor:
        # One made meanwhile by another writer is not made again (nor audited twice): read below.
        cursor.execute(
            f"INSERT INTO {Repository._meta.db_table} (organization_id, slug, name, created_at)"  # noqa: S608 - our table
            " SELECT %s, slug, '', %s FROM unnest(%s::varchar[]) AS slug"
            " ON CONFLICT (organization_id, slug) DO NOTHING RETURNING id, slug",
            [principal.organization.pk, timezone.now(), wanted],
        )
        copy_values(
            AuditEvent,
            [
                audit_values(
                    principal=principal,
                    action="repository.create",
                    target_type="repository",
                    target_id=pk,
                    data={"slug": slug},
                )
                for pk, slug in cursor.fetchall()
            ],
        )
    made = Repository.objects.filter(organization=principal.organization, slug__in=wanted)
    return {**found, **{r.slug: r for r in made}}, errors


@transaction.atomic
def repository_get_or_create_flagged(*, principal: Principal, slug: str, name: str = "") -> tuple[Repository, bool]:
    """As repository_get_or_create, and whether this call created the repository."""
    validate_slug(slug, "repository")
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
    validate_role(role)
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
    validate_role(role)
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
