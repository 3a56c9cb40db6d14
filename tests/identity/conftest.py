"""Fixtures of the sign-in tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import global_settings
from django.test import override_settings

from organizations.models import Membership, Role, User
from tests.conftest import Tenant
from tests.identity.cimd import CA_VARIABLE, metadata_server
from tests.live_server import start_server, stop

PASSWORD = "correct horse battery staple 42"
# Where the test hosts' authorization codes are sent (nothing listens: the tests read the redirects).
REDIRECT_URI = "http://127.0.0.1:8123/callback"
# What a host known by its client-id metadata document (CIMD) says about itself there.
METADATA = {
    "client_name": "Documented Host",
    "redirect_uris": [REDIRECT_URI],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}


@pytest.fixture
def ada(acme: Tenant) -> User:
    # The live server checks passwords with the production hashers (the tests' fast one is not among them).
    with override_settings(PASSWORD_HASHERS=global_settings.PASSWORD_HASHERS):
        user = User.objects.create_user("ada", password=PASSWORD)
    Membership.objects.create(user=user, organization=acme.organization, role=Role.CURATOR)
    return user


@pytest.fixture
def cimd(server_env: dict[str, str], tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(the platform's base URL, the host's client-id document URL)."""
    with metadata_server(tmp_path, METADATA) as (document_url, certificate):
        env = server_env | {"OAUTH_CIMD_FETCHER": "tests.identity.cimd.LoopbackFetcher", CA_VARIABLE: str(certificate)}
        server, base = start_server(env, tmp_path / "server.log")
        try:
            yield base, document_url
        finally:
            stop(server)
