"""What the checks against a live server share (scripts/inspector_check.py, scripts/api_check.py).

A scratch organization with one token, the platform served on a free loopback port from this
checkout's database (the embedded PostgreSQL unless DATABASE_URL says otherwise), and cleaning up
after both: the server is stopped and the organization deleted with everything in it, so the
development database is not littered with check organizations.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
sys.path.insert(0, str(ROOT))

from memory_platform import web  # noqa: E402 - the project is importable once ROOT is on the path

# Run by `manage.py shell`: memories and facts first, as they PROTECT the repositories the
# organization's cascade deletes; everything else (tokens, links, entities, audit) cascades.
_DELETE_ORGANIZATION = """
from django.db import transaction
from knowledge.models import Triple
from memories.models import Memory
from organizations.models import Organization

with transaction.atomic():
    for organization in Organization.objects.filter(slug={slug!r}):
        Triple.objects.filter(organization=organization).delete()
        Memory.objects.filter(organization=organization).delete()
        organization.delete()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def manage(*args: str) -> str:
    return subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


@contextmanager
def scratch_organization(prefix: str, *, role: str) -> Iterator[tuple[str, str]]:
    """A new organization ``<prefix>-<random>`` and a token of ``role``: yields (slug, token), then deletes it."""
    manage("migrate", "--noinput", "-v", "0")
    slug = f"{prefix}-{secrets.token_hex(4)}"
    token = json.loads(manage("create_organization", slug, "--token-role", role, "--json"))["token"]
    try:
        yield slug, token
    finally:
        try:
            manage("shell", "-c", _DELETE_ORGANIZATION.format(slug=slug))
        except subprocess.CalledProcessError as error:
            print(f"could not delete the scratch organization {slug}:\n{error.stderr}", file=sys.stderr)


@contextmanager
def live_server(*, env: dict[str, str] | None = None, log: IO[str] | None = None) -> Iterator[str]:
    """The platform (its web server, no worker) on a free loopback port: yields its base URL, then stops it."""
    port = free_port()
    server = subprocess.Popen(
        web.command("127.0.0.1", port),
        cwd=ROOT,
        stdout=log if log is not None else subprocess.DEVNULL,
        stderr=subprocess.STDOUT if log is not None else subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            if server.poll() is not None:
                raise SystemExit(f"the server exited with {server.returncode} before answering /healthz")
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2):  # noqa: S310 - our loopback URL
                    break
            except OSError:
                time.sleep(0.5)
        else:
            raise SystemExit("the server did not answer /healthz")
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
