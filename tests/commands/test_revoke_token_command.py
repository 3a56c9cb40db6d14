from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory_platform.exceptions import AuthenticationFailed
from organizations.models import Role
from organizations.tokens import principal_for_token
from tests.conftest import Tenant


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("revoke_token", *args, stdout=out)
    return out.getvalue()


def test_revoking_by_prefix_stops_the_token(acme: Tenant) -> None:
    raw = acme.raw_tokens[Role.AGENT]
    prefix = raw.split("_")[1]

    output = _run(prefix)

    assert output == f"Revoked token mp_{prefix}_… of 'acme' (agent).\n"
    with pytest.raises(AuthenticationFailed, match="revoked"):
        principal_for_token(raw)
    assert principal_for_token(acme.raw_tokens[Role.READER]).role == Role.READER


def test_the_whole_token_works_as_the_argument(acme: Tenant) -> None:
    raw = acme.raw_tokens[Role.CURATOR]

    _run(raw)

    with pytest.raises(AuthenticationFailed, match="revoked"):
        principal_for_token(raw)


def test_any_organizations_token_can_be_revoked_from_the_host(acme: Tenant, globex: Tenant) -> None:
    raw = globex.raw_tokens[Role.ADMIN]

    assert "of 'globex' (admin)" in _run(raw.split("_")[1])

    with pytest.raises(AuthenticationFailed):
        principal_for_token(raw)


def test_an_unknown_prefix_is_refused(acme: Tenant) -> None:
    with pytest.raises(CommandError) as refused:
        _run("00000000")

    assert str(refused.value) == "no token with prefix '00000000'"
    assert principal_for_token(acme.raw_tokens[Role.AGENT]).role == Role.AGENT
