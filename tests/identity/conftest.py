"""Fixtures of the sign-in tests."""

from __future__ import annotations

import pytest
from django.conf import global_settings
from django.test import override_settings

from organizations.models import Membership, Role, User
from tests.conftest import Tenant

PASSWORD = "correct horse battery staple 42"


@pytest.fixture
def ada(acme: Tenant) -> User:
    # The live server checks passwords with the production hashers (the tests' fast one is not among them).
    with override_settings(PASSWORD_HASHERS=global_settings.PASSWORD_HASHERS):
        user = User.objects.create_user("ada", password=PASSWORD)
    Membership.objects.create(user=user, organization=acme.organization, role=Role.CURATOR)
    return user
