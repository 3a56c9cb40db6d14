"""People sign in to the admin through the organization's OpenID Connect provider (mozilla-django-oidc).

The provider's groups (the ``SSO_GROUPS_CLAIM`` claim) map to organizations and roles
(``SSO_GROUP_ROLES``: ``{"group": "organization-slug:role"}``). At every sign-in the person's
memberships follow their groups, just in time: a mapped group gives the membership (the highest
role when several map to one organization), and a membership single sign-on gave ends when its
group is gone. Memberships an admin gave by hand are left alone. Every change is audited as made by
"operator (single sign-on)". The provider's endpoints come from its discovery document
(``SSO_OIDC_ISSUER``), read once per process.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import requests
from django.conf import settings
from django.db import transaction
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import import_from_settings
from mozilla_django_oidc.views import OIDCAuthenticationRequestView

from identity.models import SingleSignOnMembership
from memory_platform.exceptions import DomainError
from organizations.models import Organization, Role, User
from organizations.principal import Principal
from organizations.services import membership_remove, membership_set

logger = logging.getLogger(__name__)

ACTOR = "single sign-on"
# mozilla-django-oidc's endpoint settings, and the discovery document's names for them.
DISCOVERED = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
}
_discovery: dict[str, Any] = {}
_discovering = threading.Lock()


def _discovered(key: str) -> Any:
    with _discovering:
        if not _discovery:
            url = f"{settings.SSO_OIDC_ISSUER.rstrip('/')}/.well-known/openid-configuration"
            response = requests.get(url, timeout=10)
            response.raise_for_status()
            _discovery.update(response.json())
    return _discovery[key]


def sso_setting(attr: str, *args: Any) -> Any:
    """A mozilla-django-oidc setting; the provider's endpoints from its discovery document unless set."""
    if attr in DISCOVERED and not getattr(settings, attr, None):
        return _discovered(DISCOVERED[attr])
    return import_from_settings(attr, *args)


class AuthenticationRequestView(OIDCAuthenticationRequestView):
    get_settings = staticmethod(sso_setting)


def wanted_roles(claims: dict[str, Any]) -> dict[str, str]:
    """{organization slug: role} the person's groups give (the highest role per organization)."""
    groups = claims.get(settings.SSO_GROUPS_CLAIM) or []
    if isinstance(groups, str):
        groups = [groups]
    wanted: dict[str, str] = {}
    for group in groups:
        mapped = settings.SSO_GROUP_ROLES.get(str(group))
        if not mapped:
            continue
        slug, _, role = mapped.partition(":")
        if role not in Role.values:
            logger.warning("SSO_GROUP_ROLES maps %s to an unknown role %r", group, role)
            continue
        if slug not in wanted or Role.rank(role) > Role.rank(wanted[slug]):
            wanted[slug] = role
    return wanted


@transaction.atomic
def sync_memberships(user: User, claims: dict[str, Any]) -> None:
    """Make ``user``'s single-sign-on memberships what their groups say now."""
    wanted = wanted_roles(claims)
    for slug, role in wanted.items():
        organization = Organization.objects.filter(slug=slug).first()
        if organization is None:
            logger.warning("SSO_GROUP_ROLES names organization %r, which does not exist", slug)
            continue
        membership_set(
            principal=Principal.for_operator(organization, ACTOR), user=user, role=role, reason="groups at sign-in"
        )
        SingleSignOnMembership.objects.get_or_create(user=user, organization=organization)
    for granted in SingleSignOnMembership.objects.filter(user=user).select_related("organization"):
        if granted.organization.slug in wanted:
            continue
        try:
            membership_remove(
                principal=Principal.for_operator(granted.organization, ACTOR), user=user, reason="group gone at sign-in"
            )
        except DomainError as error:  # the last admin stays; say so where the operator will look
            logger.warning("single sign-on kept %s in %s: %s", user, granted.organization.slug, error.message)
            continue
        granted.delete()


class SingleSignOnBackend(OIDCAuthenticationBackend):
    get_settings = staticmethod(sso_setting)

    def _username(self, claims: dict[str, Any]) -> str:
        return str(claims.get(settings.SSO_USERNAME_CLAIM) or claims.get("sub") or "")

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        return bool(self._username(claims))

    def filter_users_by_claims(self, claims: dict[str, Any]) -> Any:
        return self.UserModel.objects.filter(username=self._username(claims))

    def create_user(self, claims: dict[str, Any]) -> User:
        user = User.objects.create_user(username=self._username(claims), email=claims.get("email") or "", password=None)
        sync_memberships(user, claims)
        user.refresh_from_db()
        return user

    def update_user(self, user: User, claims: dict[str, Any]) -> User:
        sync_memberships(user, claims)
        user.refresh_from_db()
        return user
