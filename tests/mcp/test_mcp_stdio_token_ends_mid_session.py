"""A token revoked or expired while its stdio session is open stops working at the next request,
as it would over HTTP; the session answers each refused request and stays up."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import Memory
from organizations.models import ApiToken
from organizations.tokens import token_create, token_revoke
from tests.conftest import Tenant
from tests.mcp.stdio import handshake, read_message, send, tool_call

pytestmark = pytest.mark.django_db(transaction=True)
Spawn = Callable[..., subprocess.Popen[bytes]]
WRITE = {"scope_type": "organization", "memory_type": "fact", "current_content": "Deploys need two approvals."}


def _session(token: str, stdio_env: Callable[..., dict[str, str]], spawn_stdio: Spawn) -> subprocess.Popen[bytes]:
    process = spawn_stdio(stdio_env(token))
    handshake(process)
    send(process, tool_call(2, "memory-list", {}))
    assert "result" in read_message(process)
    return process


@pytest.mark.parametrize("ending", ["revoked", "expired"])
def test_the_next_request_is_refused_and_nothing_is_written(
    acme: Tenant, stdio_env: Callable[..., dict[str, str]], spawn_stdio: Spawn, ending: str
) -> None:
    issued = token_create(principal=acme.admin, role="agent", name="session")
    process = _session(issued.raw, stdio_env, spawn_stdio)

    if ending == "revoked":
        token_revoke(principal=acme.admin, prefix=issued.token.prefix)
    else:
        ApiToken.objects.filter(pk=issued.token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    send(process, tool_call(3, "memory-write", {**WRITE, "organization": "acme"}))
    answer = read_message(process)

    assert answer["id"] == 3
    assert answer["error"]["code"] == -32001
    assert {"revoked": "has been revoked", "expired": "has expired"}[ending] in answer["error"]["message"]
    assert not Memory.objects.exists()
    # The session still answers (each request is refused the same way) until the client leaves.
    send(process, {"jsonrpc": "2.0", "id": 4, "method": "ping"})
    assert read_message(process)["id"] == 4


def test_a_role_changed_mid_session_applies_from_the_next_request(
    acme: Tenant, stdio_env: Callable[..., dict[str, str]], spawn_stdio: Spawn
) -> None:
    issued = token_create(principal=acme.admin, role="agent", name="session")
    process = _session(issued.raw, stdio_env, spawn_stdio)

    ApiToken.objects.filter(pk=issued.token.pk).update(role="reader")
    send(process, tool_call(3, "memory-write", WRITE))
    answer = read_message(process)

    assert answer["result"]["isError"] is True
    assert "needs the agent role" in answer["result"]["content"][0]["text"]
    assert not Memory.objects.exists()
