from __future__ import annotations

import pytest

from memory_platform.exceptions import AuthenticationFailed
from organizations.models import AuditEvent, Role
from organizations.tokens import principal_for_token, token_create, token_revoke
from tests.conftest import Tenant


def test_a_revoked_token_stops_working_and_others_keep_working(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role=Role.AGENT)

    revoked = token_revoke(principal=acme.admin, prefix=issued.token.prefix)

    assert revoked.revoked_at is not None
    with pytest.raises(AuthenticationFailed, match="revoked"):
        principal_for_token(issued.raw)
    assert principal_for_token(acme.raw_tokens[Role.AGENT]).role == Role.AGENT


def test_the_whole_token_may_be_given_instead_of_the_prefix(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role=Role.AGENT)

    token_revoke(principal=acme.admin, prefix=issued.raw)

    with pytest.raises(AuthenticationFailed, match="revoked"):
        principal_for_token(issued.raw)


def test_revoking_twice_keeps_the_first_revocation(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role=Role.AGENT)
    first = token_revoke(principal=acme.admin, prefix=issued.token.prefix).revoked_at

    again = token_revoke(principal=acme.admin, prefix=issued.token.prefix)

    assert again.revoked_at == first
    assert AuditEvent.objects.filter(action="token.revoke", target_id=issued.token.prefix).count() == 1


def test_an_admin_token_may_revoke_itself(acme: Tenant) -> None:
    token_revoke(principal=acme.admin, prefix=acme.raw_tokens[Role.ADMIN])

    with pytest.raises(AuthenticationFailed, match="revoked"):
        principal_for_token(acme.raw_tokens[Role.ADMIN])
