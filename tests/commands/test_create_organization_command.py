from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory_platform.exceptions import AuthenticationFailed
from organizations.models import ApiToken, Organization, Role
from organizations.tokens import principal_for_token
from tests.conftest import Tenant


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("create_organization", *args, stdout=out)
    return out.getvalue()


def test_json_output_gives_a_working_agent_token(db: None) -> None:
    payload = json.loads(_run("initech", "--name", "Initech Inc.", "--json"))

    assert set(payload) == {"organization", "token", "role"}
    assert payload["organization"] == "initech"
    assert payload["role"] == "agent"
    principal = principal_for_token(payload["token"])
    assert principal.organization == Organization.objects.get(slug="initech")
    assert principal.organization.name == "Initech Inc."
    assert principal.role == Role.AGENT


@pytest.mark.parametrize("flag", ["--token-role", "--role"])
def test_the_token_role_can_be_chosen(db: None, flag: str) -> None:
    payload = json.loads(_run("initech", flag, "admin", "--json"))

    assert payload["role"] == "admin"
    assert principal_for_token(payload["token"]).role == Role.ADMIN


def test_plain_output_shows_the_token_once_with_a_warning(db: None) -> None:
    output = _run("initech")

    match = re.search(r"Agent token \(shown once, store it now\): (mp_[0-9a-f]{8}_\S+)", output)
    assert match, output
    assert output.startswith("Created organization 'initech'.")
    assert principal_for_token(match[1]).organization.slug == "initech"


def test_the_token_cannot_be_read_back_later(db: None) -> None:
    raw = json.loads(_run("initech", "--json"))["token"]

    token = ApiToken.objects.get(organization__slug="initech")
    assert raw.split("_", 2)[2] not in f"{token.prefix} {token.secret_hash} {token.name}"


def test_a_duplicate_slug_is_refused_clearly(acme: Tenant) -> None:
    tokens_before = ApiToken.objects.count()

    with pytest.raises(CommandError) as refused:
        _run("acme", "--json")

    assert str(refused.value) == "an organization with slug 'acme' already exists; choose another slug"
    assert Organization.objects.filter(slug="acme").count() == 1
    assert ApiToken.objects.count() == tokens_before


def test_a_bad_slug_is_refused_with_the_rule(db: None) -> None:
    before = Organization.objects.count()
    with pytest.raises(CommandError, match="'Bad Slug' is not a valid organization slug: use 1-64 lowercase"):
        _run("Bad Slug")

    assert Organization.objects.count() == before


def test_a_bad_role_is_refused_listing_the_roles_and_creates_nothing(db: None) -> None:
    with pytest.raises(CommandError) as refused:
        _run("initech", "--token-role", "owner")

    assert str(refused.value) == "unknown role 'owner'; use one of: reader, agent, curator, admin"
    assert not Organization.objects.filter(slug="initech").exists()


def test_each_organizations_token_belongs_to_it_alone(db: None) -> None:
    first = json.loads(_run("initech", "--json"))["token"]
    second = json.loads(_run("umbrella", "--json"))["token"]

    assert principal_for_token(first).organization.slug == "initech"
    assert principal_for_token(second).organization.slug == "umbrella"
    with pytest.raises(AuthenticationFailed):
        principal_for_token(first[:12] + second[12:])
