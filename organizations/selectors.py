"""Reads for tenancy: repositories, members, tokens and the principal of a logged-in person.

Reads scoped by a principal see only its organization. The few that take no principal
(``organization_by_slug``, ``organizations_of_user``, ``is_member``) serve authentication, which
runs before there is a principal to scope by.
"""

from __future__ import annotations

from django.db.models import QuerySet

from memory_platform.exceptions import NotFound, ValidationError
from organizations.models import ApiToken, Membership, Organization, Repository, Role, User
from organizations.principal import Principal


def organization_by_slug(slug: str) -> Organization | None:
    return Organization.objects.filter(slug=slug).first()


def organization_slugs(*, limit: int) -> list[str]:
    return list(Organization.objects.values_list("slug", flat=True)[:limit])


def organizations_of_user(user: User, *, limit: int) -> list[Organization]:
    """Up to ``limit`` organizations the user is a member of (enough to tell one from several)."""
    memberships = Membership.objects.filter(user=user).select_related("organization")[:limit]
    return [membership.organization for membership in memberships]


def is_member(user: User, organization: Organization) -> bool:
    return Membership.objects.filter(user=user, organization=organization).exists()


def principal_for_user(*, user: User, organization: Organization) -> Principal:
    """The principal of a logged-in person acting in one organization."""
    if user.is_superuser:
        return Principal(organization=organization, role=Role.ADMIN, user=user, is_superuser=True)
    membership = Membership.objects.filter(user=user, organization=organization).first()
    if membership is None:
        raise NotFound(f"organization '{organization.slug}' not found")
    return Principal(organization=organization, role=membership.role, user=user)


def repository_list(principal: Principal) -> QuerySet[Repository]:
    return Repository.objects.filter(organization=principal.organization).order_by("slug")


def repository_get(principal: Principal, slug: str) -> Repository:
    repository = Repository.objects.filter(organization=principal.organization, slug=slug).first()
    if repository is None:
        raise NotFound(f"repository '{slug}' not found in {principal.organization.slug}")
    return repository


KNOWN_REPOSITORIES_SHOWN = 20
# platform-status lists this many of the organization's repositories.
STATUS_REPOSITORIES_SHOWN = 100


def repository_named(principal: Principal, slug: str, *, field: str = "repository") -> Repository:
    """The organization's repository with this slug, for a memory, fact or filter that names one.

    An unknown slug (a typo, most often) is refused with the known ones listed, never taken as a new
    repository: creating one is explicit.
    """
    repository = Repository.objects.filter(organization=principal.organization, slug=slug).first()
    if repository is not None:
        return repository
    known = list(repository_list(principal).values_list("slug", flat=True)[: KNOWN_REPOSITORIES_SHOWN + 1])
    listed = ", ".join(known[:KNOWN_REPOSITORIES_SHOWN]) + (", ..." if len(known) > KNOWN_REPOSITORIES_SHOWN else "")
    raise ValidationError(
        f"repository '{slug}' does not exist in {principal.organization.slug} "
        f"(known repositories: {listed or 'none yet'}). Check the slug, or create the repository first: "
        "POST /api/v1/repositories/, the admin, or create_repository: true on a memory write",
        details={"field": field, "known": known[:KNOWN_REPOSITORIES_SHOWN]},
    )


def token_list(principal: Principal) -> QuerySet[ApiToken]:
    """The organization's tokens, newest first, for its admins (never their secrets: only hashes exist)."""
    principal.require(Role.ADMIN, "listing API tokens")
    return ApiToken.objects.filter(organization=principal.organization).select_related("user").order_by("-created_at")


def member_by_username(principal: Principal, username: str) -> User:
    """A member of the principal's organization, by username (for tokens that act for a person)."""
    user = User.objects.filter(username=username, memberships__organization=principal.organization).first()
    if user is None:
        raise ValidationError(
            f"user '{username}' is not a member of {principal.organization.slug}", details={"field": "user"}
        )
    return user
