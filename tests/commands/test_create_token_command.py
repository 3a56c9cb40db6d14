from __future__ import annotations

import io
import json
import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from organizations.models import ApiToken, Membership, Role, User
from organizations.tokens import principal_for_token
from tests.conftest import Tenant


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("create_token", *args, stdout=out)
    return out.getvalue()


def test_json_output_gives_a_working_token_of_the_role(acme: Tenant) -> None:
    payload = json.loads(_run("--organization", "acme", "--role", "curator", "--name", "reviewer", "--json"))

    assert payload["organization"] == "acme"
    assert payload["role"] == "curator"
    principal = principal_for_token(payload["token"])
    assert principal.organization == acme.organization
    assert principal.role == Role.CURATOR
    assert principal.token is not None and principal.token.name == "reviewer"


def test_the_default_role_is_agent_and_plain_output_warns_it_is_shown_once(acme: Tenant) -> None:
    output = _run("--organization", "acme")

    match = re.fullmatch(r"Agent token for 'acme' \(shown once, store it now\): (mp_[0-9a-f]{8}_\S+)\n", output)
    assert match, output
    assert principal_for_token(match[1]).role == Role.AGENT


def test_a_personal_token_acts_for_its_user(acme: Tenant) -> None:
    user = User.objects.create_user(username="dana", password="unused-password-1")
    Membership.objects.create(user=user, organization=acme.organization, role=Role.AGENT)

    payload = json.loads(_run("--organization", "acme", "--user", "dana", "--json"))

    assert principal_for_token(payload["token"]).user == user


def test_a_token_may_expire(acme: Tenant) -> None:
    payload = json.loads(_run("--organization", "acme", "--expires-in-days", "7", "--json"))

    expires_at = principal_for_token(payload["token"]).token.expires_at  # type: ignore[union-attr]
    assert expires_at is not None
    assert abs(expires_at - (timezone.now() + timedelta(days=7))) < timedelta(minutes=1)


def test_an_unknown_organization_is_refused_with_the_known_ones(acme: Tenant, globex: Tenant) -> None:
    count = ApiToken.objects.count()

    with pytest.raises(CommandError) as refused:
        _run("--organization", "initech")

    assert str(refused.value) == ("no organization 'initech' (known: acme, globex); create it with create_organization")
    assert ApiToken.objects.count() == count


def test_an_unknown_role_is_refused_listing_the_roles(acme: Tenant) -> None:
    with pytest.raises(CommandError, match=r"^unknown role 'root'; use one of: reader, agent, curator, admin$"):
        _run("--organization", "acme", "--role", "root")


def test_an_unknown_user_is_refused(acme: Tenant) -> None:
    with pytest.raises(CommandError, match=r"^no user 'nobody'$"):
        _run("--organization", "acme", "--user", "nobody")


def test_a_user_from_another_organization_is_refused(acme: Tenant, globex: Tenant) -> None:
    with pytest.raises(CommandError, match=r"^user 'globex-person' is not a member of acme$"):
        _run("--organization", "acme", "--user", "globex-person")


@pytest.mark.parametrize("days", ["0", "-3"])
def test_a_non_positive_expiry_is_refused(acme: Tenant, days: str) -> None:
    with pytest.raises(CommandError, match="--expires-in-days must be a positive number of days"):
        _run("--organization", "acme", "--expires-in-days", days)
