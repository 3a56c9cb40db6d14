"""What the 2026-07-28 revision asks of a server, checked on the wire, over HTTP and over stdio.

No handshake and no protocol session: every request carries the revision, the client's
capabilities (and, optionally, its identity) in ``params._meta``; over HTTP the
``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers repeat them. ``server/discover``
says what the server is. Results say ``resultType`` and name the server in ``_meta``. Clients of
2025-11-25 and older keep working beside them, request by request.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from tests.conftest import MemoryFactory, Tenant
from tests.mcp.stdio import INITIALIZE, read_message, send

REVISION = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": REVISION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1"},
}
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def request(method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": ENVELOPE}}


def post(tenant: Tenant, message: dict[str, Any], **headers: str) -> Any:
    """POST ``message`` to /mcp as a 2026-07-28 client sends it (headers may be overridden or removed with "")."""
    params = message.get("params") or {}
    name = params.get("name") or params.get("uri")
    sent = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {tenant.raw_tokens['agent']}",
        "MCP-Protocol-Version": REVISION,
        "Mcp-Method": str(message.get("method", "")),
        **({"Mcp-Name": str(name)} if name else {}),
        **headers,
    }
    return Client().post(
        "/mcp",
        data=json.dumps(message),
        content_type="application/json",
        headers={key: value for key, value in sent.items() if value},
    )


@pytest.mark.django_db
class TestHttp:
    def test_discover_says_what_the_server_is_without_a_handshake(self, acme: Tenant) -> None:
        response = post(acme, request("server/discover"))

        assert response.status_code == 200
        assert "Mcp-Session-Id" not in response.headers
        result = response.json()["result"]
        assert REVISION in result["supportedVersions"]
        assert {"tools", "resources", "prompts"} <= set(result["capabilities"])
        assert "memory-search" in result["instructions"]
        assert result["_meta"][SERVER_INFO]["name"] == "Memory MCP Server"
        assert result["resultType"] == "complete"

    def test_a_tool_call_is_answered_on_its_own(self, acme: Tenant, make_memory: MemoryFactory) -> None:
        memory = make_memory(current_content="Releases are cut on Tuesdays.")

        response = post(acme, request("tools/call", {"name": "memory-get", "arguments": {"id": str(memory.id)}}))

        assert response.status_code == 200
        assert "Mcp-Session-Id" not in response.headers
        result = response.json()["result"]
        assert result["isError"] is False and result["resultType"] == "complete"
        assert json.loads(result["content"][0]["text"])["current_content"] == "Releases are cut on Tuesdays."
        assert result["_meta"][SERVER_INFO]["name"] == "Memory MCP Server"

    def test_lists_resources_and_prompts(self, acme: Tenant) -> None:
        tools = post(acme, request("tools/list")).json()["result"]["tools"]
        resources = post(acme, request("resources/list")).json()["result"]["resources"]
        prompts = post(acme, request("prompts/list")).json()["result"]["prompts"]
        index = post(acme, request("resources/read", {"uri": "memory://index"})).json()["result"]

        assert "memory-write" in {tool["name"] for tool in tools}
        assert "memory://index" in {resource["uri"] for resource in resources}
        assert "memory-agent-core" in {prompt["name"] for prompt in prompts}
        assert index["contents"][0]["uri"] == "memory://index"

    def test_a_request_without_the_envelope_is_told_what_to_add(self, acme: Tenant) -> None:
        message = {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}}

        response = post(acme, message)

        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == -32602 and "io.modelcontextprotocol/protocolVersion" in error["message"]

    def test_headers_that_contradict_the_body_are_refused(self, acme: Tenant) -> None:
        call = request("tools/call", {"name": "memory-get", "arguments": {"id": "x"}})

        wrong_method = post(acme, call, **{"Mcp-Method": "tools/list"})
        wrong_name = post(acme, call, **{"Mcp-Name": "memory-delete"})
        no_version = post(acme, call, **{"MCP-Protocol-Version": ""})

        for response in (wrong_method, wrong_name, no_version):
            assert response.status_code == 400
            assert response.json()["error"]["code"] == -32020, response.json()
        assert "MCP-Protocol-Version" in no_version.json()["error"]["message"]

    def test_an_unsupported_revision_is_answered_with_the_supported_ones(self, acme: Tenant) -> None:
        message = request("tools/list")
        message["params"]["_meta"] = {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}

        response = post(acme, message, **{"MCP-Protocol-Version": "2099-01-01"})

        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == -32022 and error["data"]["supported"] == [REVISION]

    def test_a_method_the_server_lacks_is_not_found(self, acme: Tenant) -> None:
        completion = {"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": "b"}}

        response = post(acme, request("completion/complete", completion))

        assert response.status_code == 404
        assert response.json()["error"]["code"] == -32601

    def test_a_notification_is_acknowledged_with_no_body(self, acme: Tenant) -> None:
        notification = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}

        response = post(acme, notification)

        assert response.status_code == 202 and response.content == b""

    def test_parameters_that_do_not_fit_are_said_in_a_line(self, acme: Tenant) -> None:
        response = post(acme, request("tools/call", {"arguments": {}}), **{"Mcp-Name": ""})

        assert response.status_code == 400
        error = response.json()["error"]
        assert error == {"code": -32602, "message": "invalid parameters for tools/call (params.name: missing)"}

    def test_a_2025_client_is_served_beside_it(self, acme: Tenant) -> None:
        legacy = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": "2025-11-25"}}

        handshake = post(acme, legacy, **{"MCP-Protocol-Version": "", "Mcp-Method": ""})
        listed = post(
            acme,
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            **{"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": ""},
        )

        assert handshake.json()["result"]["protocolVersion"] == "2025-11-25"
        assert "Mcp-Session-Id" not in handshake.headers
        assert "resultType" not in listed.json()["result"] and listed.json()["result"]["tools"]

    def test_a_2026_client_asking_to_initialize_gets_the_newest_handshake_revision(self, acme: Tenant) -> None:
        message = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": REVISION}}

        response = post(acme, message, **{"MCP-Protocol-Version": "", "Mcp-Method": ""})

        assert response.json()["result"]["protocolVersion"] == "2025-11-25"


@pytest.mark.django_db(transaction=True)
def test_stdio_serves_2026_requests_and_refuses_a_late_handshake(
    acme: Tenant, stdio_env: Callable[..., dict[str, str]], spawn_stdio: Callable[..., subprocess.Popen[bytes]]
) -> None:
    process = spawn_stdio(stdio_env(acme.raw_tokens["agent"]))

    send(process, request("server/discover", request_id=1))
    discovered = read_message(process)
    send(process, request("tools/call", {"name": "platform-status", "arguments": {}}, request_id=2))
    status = read_message(process)
    send(process, {**INITIALIZE, "id": 3})
    late_handshake = read_message(process)
    send(process, {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}})
    without_envelope = read_message(process)

    assert REVISION in discovered["result"]["supportedVersions"]
    assert discovered["result"]["_meta"][SERVER_INFO]["name"] == "Memory MCP Server"
    assert status["result"]["resultType"] == "complete"
    assert json.loads(status["result"]["content"][0]["text"])["organization"] == "acme"
    # The first request decided the revision; a handshake afterwards is refused, naming what is served.
    assert late_handshake["error"]["code"] == -32022 and REVISION in json.dumps(late_handshake["error"])
    assert without_envelope["error"]["code"] == -32602
