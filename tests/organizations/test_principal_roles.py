from __future__ import annotations

import pytest

from memory_platform.exceptions import NotFound, PermissionDenied
from organizations.models import Role, User
from organizations.principal import Principal
from tests.conftest import Tenant


def test_roles_rank_reader_agent_curator_admin() -> None:
    ranks = [Role.rank(role) for role in (Role.READER, Role.AGENT, Role.CURATOR, Role.ADMIN)]

    assert ranks == sorted(ranks)
    assert len(set(ranks)) == 4


@pytest.mark.parametrize(
    ("held", "allowed"),
    [
        (Role.READER, {Role.READER}),
        (Role.AGENT, {Role.READER, Role.AGENT}),
        (Role.CURATOR, {Role.READER, Role.AGENT, Role.CURATOR}),
        (Role.ADMIN, {Role.READER, Role.AGENT, Role.CURATOR, Role.ADMIN}),
    ],
)
def test_a_role_includes_every_lower_role(acme: Tenant, held: str, allowed: set[str]) -> None:
    principal: Principal = getattr(acme, held)

    assert {role for role in Role.values if principal.has_role(role)} == allowed


def test_a_superuser_has_every_role_whatever_the_role_field_says(acme: Tenant) -> None:
    root = User.objects.create_superuser(username="root", password="unused-password-1")
    principal = Principal(organization=acme.organization, role=Role.READER, user=root, is_superuser=True)

    assert all(principal.has_role(role) for role in Role.values)
    principal.require(Role.ADMIN, "anything")


def test_an_unknown_role_cannot_make_a_principal(acme: Tenant) -> None:
    with pytest.raises(ValueError, match="unknown role 'owner'"):
        Principal(organization=acme.organization, role="owner")


def test_require_names_the_action_the_role_needed_and_the_role_held(acme: Tenant) -> None:
    with pytest.raises(PermissionDenied) as refused:
        acme.reader.require(Role.CURATOR, "locking a memory")

    assert refused.value.message == (
        "locking a memory needs the curator role or higher; this token has the reader role in acme. "
        "Ask an organization admin."
    )


def test_require_speaks_of_an_account_for_a_logged_in_person(acme: Tenant) -> None:
    person = User.objects.create_user(username="pat", password="unused-password-1")
    principal = Principal(organization=acme.organization, role=Role.AGENT, user=person)

    with pytest.raises(PermissionDenied) as refused:
        principal.require(Role.ADMIN, "managing members")

    assert "this account has the agent role in acme" in refused.value.message


def test_require_lets_the_role_and_higher_through(acme: Tenant) -> None:
    acme.curator.require(Role.CURATOR, "verifying a memory")
    acme.admin.require(Role.CURATOR, "verifying a memory")


def test_check_organization_accepts_nothing_or_the_own_slug(acme: Tenant) -> None:
    acme.agent.check_organization(None)
    acme.agent.check_organization("")
    acme.agent.check_organization("acme")


def test_check_organization_refuses_another_slug_as_not_found(acme: Tenant, globex: Tenant) -> None:
    with pytest.raises(NotFound) as refused:
        acme.agent.check_organization("globex")

    assert refused.value.message == "organization 'globex' not found; this token belongs to 'acme'"


def test_labels_say_who_acted(acme: Tenant) -> None:
    token = acme.agent.token
    assert token is not None
    person = acme.person.token
    assert person is not None

    assert acme.agent.label == f"token mp_{token.prefix}_…"
    assert acme.person.label == f"token mp_{person.prefix}_… for acme-person"
    assert Principal.for_operator(acme.organization, "deploy-script").label == "operator (deploy-script)"
    user = User.objects.create_user(username="pat", password="unused-password-1")
    assert Principal(organization=acme.organization, role=Role.READER, user=user).label == "user pat"


def test_the_operator_is_a_superuser_admin(acme: Tenant) -> None:
    operator = Principal.for_operator(acme.organization)

    assert operator.role == Role.ADMIN
    assert operator.is_superuser
    assert operator.label == "operator (manage.py)"
