from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from memory_platform.exceptions import AuthenticationFailed
from organizations.models import ApiToken, Role
from organizations.tokens import principal_for_token, token_create
from tests.conftest import Tenant


def _last_used(token: ApiToken) -> datetime | None:
    return ApiToken.objects.values_list("last_used_at", flat=True).get(pk=token.pk)


def test_first_use_records_last_used_at(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role=Role.AGENT)
    assert _last_used(issued.token) is None

    before = timezone.now()
    principal_for_token(issued.raw)

    last_used = _last_used(issued.token)
    assert last_used is not None
    assert before <= last_used <= timezone.now()


def test_last_used_at_is_not_rewritten_within_the_resolution_window(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role=Role.AGENT)
    principal_for_token(issued.raw)
    first = _last_used(issued.token)

    for _ in range(3):
        principal_for_token(issued.raw)

    assert _last_used(issued.token) == first


def test_last_used_at_moves_on_once_the_window_has_passed(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role=Role.AGENT)
    long_ago = timezone.now() - timedelta(seconds=61)
    ApiToken.objects.filter(pk=issued.token.pk).update(last_used_at=long_ago)

    principal_for_token(issued.raw)

    last_used = _last_used(issued.token)
    assert last_used is not None
    assert last_used > long_ago + timedelta(seconds=60)


def test_a_failed_authentication_does_not_count_as_use(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role=Role.AGENT)

    with pytest.raises(AuthenticationFailed):
        principal_for_token(issued.raw + "tampered")

    assert _last_used(issued.token) is None
