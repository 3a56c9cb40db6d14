"""A host registers by Client ID Metadata Document: its client_id is the https URL of its metadata.

The official MCP Python SDK's client, given that URL, skips dynamic registration when the
authorization server's metadata says it takes such documents; the platform fetches the document,
the consent page names the host it describes, and the token works. The document is served over
TLS on loopback; the live server reads it with tests/identity/cimd.py's fetcher (the shipped one
refuses loopback addresses, as an SSRF guard must).
"""

from __future__ import annotations

import httpx
import pytest
from oauth2_provider.models import get_application_model

from organizations.models import Role, User
from tests.conftest import Tenant
from tests.identity.test_oauth_mcp_flow import Person, Storage, _provider, _status

pytestmark = pytest.mark.django_db(transaction=True)


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
