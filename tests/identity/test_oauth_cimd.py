"""A host registers by Client ID Metadata Document: its client_id is the https URL of its metadata.

The official MCP Python SDK's client, given that URL, skips dynamic registration when the
authorization server's metadata says it takes such documents; the platform fetches the document,
the consent page names the host it describes, and the token works. The document is served over
TLS on loopback; the live server reads it with tests/identity/cimd.py's fetcher (the shipped one
refuses loopback addresses, as an SSRF guard must).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from oauth2_provider.models import get_application_model

from organizations.models import Role, User
from tests.conftest import Tenant
from tests.identity.cimd import CA_VARIABLE, metadata_server
from tests.identity.test_oauth_mcp_flow import REDIRECT_URI, Person, Storage, _provider, _status
from tests.live_server import start_server, stop

pytestmark = pytest.mark.django_db(transaction=True)

METADATA = {
    "client_name": "Documented Host",
    "redirect_uris": [REDIRECT_URI],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}


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


def test_a_host_known_by_its_metadata_document_signs_in(acme: Tenant, ada: User, cimd: tuple[str, str]) -> None:
    base, document_url = cimd
    metadata = httpx.get(f"{base}/.well-known/oauth-authorization-server", timeout=30).json()
    assert metadata["client_id_metadata_document_supported"] is True
    person = Person(base=base, username="ada", organization="acme", role=Role.AGENT)

    provider = _provider(f"{base}/mcp", person, Storage(), client_metadata_url=document_url)

    status = _status(f"{base}/mcp", provider, "auto")

    assert (status["organization"], status["role"]) == ("acme", Role.AGENT)
    assert "Documented Host" in person.pages[0]
    application = get_application_model().objects.get(client_id=document_url)
    assert application.name == "Documented Host"
    assert get_application_model().objects.count() == 1  # no dynamic registration
