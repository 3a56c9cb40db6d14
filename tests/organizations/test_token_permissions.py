from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_platform.exceptions import NotFound, PermissionDenied, ValidationError
from organizations.models import ApiToken, Membership, Role, User
from organizations.principal import Principal
from organizations.tokens import principal_for_token, token_create, token_revoke
from tests.conftest import Tenant


@pytest.mark.parametrize("role", [Role.READER, Role.AGENT, Role.CURATOR])
def test_only_admins_create_tokens(acme: Tenant, role: str) -> None:
    principal: Principal = getattr(acme, role)
    count = ApiToken.objects.count()

    with pytest.raises(PermissionDenied) as refused:
        token_create(principal=principal, role=Role.READER)

    assert refused.value.message == (
        f"creating API tokens needs the admin role or higher; this token has the {role} role in acme. "
        "Ask an organization admin."
    )
    assert ApiToken.objects.count() == count


@pytest.mark.parametrize("role", [Role.READER, Role.AGENT, Role.CURATOR])
def test_only_admins_revoke_tokens(acme: Tenant, role: str) -> None:
    principal: Principal = getattr(acme, role)
    victim = acme.raw_tokens[Role.ADMIN]

    with pytest.raises(PermissionDenied, match="revoking API tokens needs the admin role"):
        token_revoke(principal=principal, prefix=victim.split("_")[1])

    assert principal_for_token(victim).role == Role.ADMIN


def test_an_admin_may_create_a_token_of_any_role(acme: Tenant) -> None:
    for role in Role.values:
        issued = token_create(principal=acme.admin, role=role)
        assert principal_for_token(issued.raw).role == role


def test_unknown_role_is_refused_with_the_list_of_roles(acme: Tenant) -> None:
    with pytest.raises(ValidationError) as refused:
        token_create(principal=acme.admin, role="owner")

    assert refused.value.message == "unknown role 'owner'; use one of: reader, agent, curator, admin"


def test_expiry_in_the_past_is_refused(acme: Tenant) -> None:
    with pytest.raises(ValidationError, match="expires_at must be in the future"):
        token_create(principal=acme.admin, role=Role.AGENT, expires_at=timezone.now() - timedelta(seconds=1))


def test_token_for_a_user_who_is_not_a_member_is_refused(acme: Tenant, globex: Tenant) -> None:
    stranger = User.objects.create_user(username="stranger", password="unused-password-1")
    Membership.objects.create(user=stranger, organization=globex.organization, role=Role.ADMIN)
    count = ApiToken.objects.count()

    with pytest.raises(ValidationError) as refused:
        token_create(principal=acme.admin, role=Role.AGENT, user=stranger)

    assert refused.value.message == "user 'stranger' is not a member of acme"
    assert ApiToken.objects.count() == count


def test_revoking_another_organizations_token_is_not_found(acme: Tenant, globex: Tenant) -> None:
    globex_token = globex.raw_tokens[Role.AGENT]
    prefix = globex_token.split("_")[1]

    with pytest.raises(NotFound) as refused:
        token_revoke(principal=acme.admin, prefix=prefix)

    assert refused.value.message == f"no token with prefix '{prefix}' in acme"
    assert principal_for_token(globex_token).organization == globex.organization


def test_revoking_an_unknown_prefix_reads_the_same(acme: Tenant) -> None:
    with pytest.raises(NotFound) as refused:
        token_revoke(principal=acme.admin, prefix="00000000")

    assert refused.value.message == "no token with prefix '00000000' in acme"
