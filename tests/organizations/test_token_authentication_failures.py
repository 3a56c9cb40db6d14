from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory_platform.exceptions import AuthenticationFailed
from organizations.models import ApiToken, Role
from organizations.tokens import principal_for_token, token_create, token_revoke
from tests.conftest import Tenant


def _failure(raw: str) -> str:
    with pytest.raises(AuthenticationFailed) as failure:
        principal_for_token(raw)
    return failure.value.message


def test_right_prefix_wrong_secret_is_invalid(acme: Tenant) -> None:
    raw = acme.raw_tokens[Role.AGENT]
    prefix = raw.split("_")[1]

    assert _failure(f"mp_{prefix}_{'x' * 43}") == "invalid token"
    assert _failure(raw[:-1]) == "invalid token"


def test_unknown_prefix_reads_the_same_as_a_wrong_secret(acme: Tenant) -> None:
    # Saying "no such prefix" would tell an attacker which prefixes exist.
    assert _failure(f"mp_00000000_{'x' * 43}") == "invalid token"


@pytest.mark.parametrize(
    "raw",
    ["", "   ", "Bearer mp_1234abcd_secret", "mp_short_secret", "xx_1234abcd_secret", "mp_1234abcd", "not-a-token"],
)
def test_malformed_tokens_say_what_shape_is_expected(db: None, raw: str) -> None:
    message = _failure(raw)

    assert message.startswith("malformed token")
    assert "mp_<prefix>_<secret>" in message


def test_revoked_token_is_refused_and_says_so(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role=Role.AGENT)
    principal_for_token(issued.raw)
    token_revoke(principal=acme.admin, prefix=issued.token.prefix)

    assert _failure(issued.raw) == "this token has been revoked; ask an organization admin for a new one"


def test_expired_token_is_refused_and_says_so(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role=Role.AGENT, expires_at=timezone.now() + timedelta(days=1))
    assert principal_for_token(issued.raw).token == issued.token

    ApiToken.objects.filter(pk=issued.token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    assert _failure(issued.raw) == "this token has expired; ask an organization admin for a new one"


def test_revoked_and_expired_messages_need_the_secret(acme: Tenant) -> None:
    """Only someone holding the secret learns that a token was revoked or expired."""
    issued = token_create(principal=acme.admin, role=Role.AGENT)
    token_revoke(principal=acme.admin, prefix=issued.token.prefix)

    assert _failure(f"mp_{issued.token.prefix}_{'x' * 43}") == "invalid token"


def test_the_four_failures_are_told_apart(acme: Tenant) -> None:
    revoked = token_create(principal=acme.admin, role=Role.AGENT)
    token_revoke(principal=acme.admin, prefix=revoked.token.prefix)
    expired = token_create(principal=acme.admin, role=Role.AGENT)
    ApiToken.objects.filter(pk=expired.token.pk).update(expires_at=timezone.now() - timedelta(minutes=1))

    messages = {
        _failure(acme.raw_tokens[Role.AGENT] + "x"),
        _failure("garbage"),
        _failure(revoked.raw),
        _failure(expired.raw),
    }

    assert len(messages) == 4
