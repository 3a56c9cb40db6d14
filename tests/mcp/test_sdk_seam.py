"""What mcp_api.sdk relies on in the MCP SDK, pinned: an SDK upgrade that changes it fails here first.

The layer contract in pyproject.toml keeps every other module of the project from importing the
SDK, so these are all the places an upgrade can break.
"""

from __future__ import annotations

import inspect
import json
import re
from importlib import metadata
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.methods import validate_client_request
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from mcp_api import identity, sdk
from tests.conftest import Tenant


def _pinned(package: str) -> str:
    requirements = (Path(settings.BASE_DIR) / "requirements.txt").read_text()
    match = re.search(rf"^{re.escape(package)}==(\S+)$", requirements, re.MULTILINE)
    assert match, f"{package} is not pinned in requirements.txt"
    return match.group(1)


@pytest.mark.parametrize("package", ["mcp", "mcp-types"])
def test_the_installed_sdk_is_the_pinned_one(package: str) -> None:
    assert metadata.version(package) == _pinned(package)


def test_the_revisions_served_are_the_ones_the_docs_name() -> None:
    assert MODERN_PROTOCOL_VERSIONS == ("2026-07-28",)
    assert tuple(identity.SUPPORTED_PROTOCOL_VERSIONS) == HANDSHAKE_PROTOCOL_VERSIONS
    assert HANDSHAKE_PROTOCOL_VERSIONS[-1] == "2025-11-25"


def _keywords(callable_: object) -> set[str]:
    return set(inspect.signature(callable_).parameters)  # type: ignore[arg-type]


def test_the_server_hooks_the_seam_registers_are_there() -> None:
    assert {
        "version", "instructions", "get_tool_input_schema", "on_list_tools", "on_call_tool", "on_list_resources",
        "on_list_resource_templates", "on_read_resource", "on_list_prompts", "on_get_prompt",
    } <= _keywords(Server.__init__)  # fmt: skip
    assert {"read_stream", "write_stream", "initialization_options"} <= _keywords(Server.run)
    assert callable(Server.create_initialization_options)


def test_the_http_manager_takes_what_the_seam_gives_it() -> None:
    assert {"json_response", "stateless", "security_settings", "max_request_body_size"} <= _keywords(
        StreamableHTTPSessionManager.__init__
    )
    assert {"scope", "receive", "send"} <= _keywords(StreamableHTTPSessionManager.handle_request)
    assert inspect.isasyncgenfunction(inspect.unwrap(StreamableHTTPSessionManager.run))


def test_request_validation_is_per_revision() -> None:
    assert {"method", "version", "params"} <= _keywords(validate_client_request)
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    assert sdk.params_problem("tools/call", {"name": "memory-get", "_meta": envelope}, "2026-07-28") is None
    # 2026-07-28 requests carry their revision in _meta; a request without it is told so.
    assert sdk.params_problem("tools/call", {"name": "memory-get"}, "2026-07-28") == (
        sdk.INVALID_PARAMS,
        "invalid parameters for tools/call (params._meta: missing)",
    )
    assert sdk.params_problem("tools/call", {"arguments": {}}, "2025-11-25") == (
        sdk.INVALID_PARAMS,
        "invalid parameters for tools/call (params.name: missing)",
    )
    # A method the revision does not have is the SDK's to answer (method not found).
    assert sdk.params_problem("server/discover", {}, "2025-11-25") is None


@pytest.mark.django_db
@pytest.mark.parametrize("version", [*HANDSHAKE_PROTOCOL_VERSIONS, "1999-01-01"])
def test_the_stdio_early_handshake_answers_what_the_sdk_answers(acme: Tenant, version: str) -> None:
    """manage.py mcp_stdio answers ``initialize`` before Django and the SDK load (mcp_api.identity);
    its answer must be the SDK's, byte for byte, for every revision a client may ask for."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    response = Client().post(
        "/mcp",
        data=json.dumps(request),
        content_type="application/json",
        headers={
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {acme.raw_tokens['agent']}",
        },
    )

    assert response.status_code == 200
    assert response.json()["result"] == identity.initialize_result(version)
