"""Fuzzing every MCP tool from its own input schema, and the transports with raw garbage.

For each tool in tools/list, hypothesis generates arguments from the tool's inputSchema and calls
it over real HTTP (a uvicorn server); then raw JSON-RPC bodies and lines of every shape go to
/mcp and to a stdio process. Whatever comes in, every request is answered, in JSON-RPC's shape,
with no internal error and no traceback. A new tool is fuzzed without anyone writing a test.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_api.server import get_server
from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.mcp.http import bearer
from tests.mcp.stdio import handshake, read_message

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.mcp_live]

TOOLS = {tool.name: tool.parameters for tool in get_server()._tool_manager.list_tools()}
INTERNAL = ("internal error", "Traceback", "Error executing tool")
FUZZ = settings(
    max_examples=15,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
# Any JSON value: what a careless or hostile client may send anywhere.
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


SCALARS: dict[str, Callable[[dict[str, Any]], st.SearchStrategy[Any]]] = {
    "string": lambda schema: st.text(max_size=60),
    "integer": lambda schema: st.integers(min_value=schema.get("minimum"), max_value=schema.get("maximum")),
    "number": lambda schema: st.floats(
        min_value=schema.get("minimum"), max_value=schema.get("maximum"), allow_nan=False, allow_infinity=False
    ),
    "boolean": lambda schema: st.booleans(),
    "null": lambda schema: st.none(),
    "array": lambda schema: st.lists(from_schema(schema.get("items", {})), max_size=4),
}


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values a JSON schema allows, for the keywords the tools' schemas use (type, enum, anyOf,
    minimum/maximum, items, properties, required, additionalProperties)."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        shared = {key: value for key, value in schema.items() if key != "anyOf"}
        return st.one_of([from_schema({**shared, **option}) for option in schema["anyOf"]])
    kind = schema.get("type")
    if kind in SCALARS:
        return SCALARS[kind](schema)
    if kind == "object" and "properties" in schema:
        required = set(schema.get("required", []))
        properties = {name: from_schema(part) for name, part in schema["properties"].items()}
        return st.fixed_dictionaries(
            {name: value for name, value in properties.items() if name in required},
            optional={name: value for name, value in properties.items() if name not in required},
        )
    return JSON if kind != "object" else st.dictionaries(st.text(max_size=12), JSON, max_size=4)


@pytest.mark.parametrize("name", sorted(TOOLS))
@FUZZ
@given(data=st.data())
def test_every_tool_answers_whatever_its_schema_allows(agent: McpClient, name: str, data: st.DataObject) -> None:
    arguments = data.draw(from_schema(TOOLS[name]), label="arguments")

    result = agent.call(name, arguments)

    for internal in INTERNAL:
        assert internal not in result.text, (name, arguments, result.text[:500])


@FUZZ
@given(body=JSON, method=st.sampled_from(["tools/call", "tools/list", "resources/read", "prompts/get", "nope"]))
def test_http_answers_any_json_rpc_body(mcp_url: str, acme: Tenant, body: Any, method: str) -> None:
    for payload in (body, {"jsonrpc": "2.0", "id": 7, "method": method, "params": body}):
        response = httpx.post(
            mcp_url, headers=bearer(acme.raw_tokens["agent"]), content=json.dumps(payload), timeout=30
        )

        assert response.status_code in (200, 202, 400), (payload, response.status_code, response.text[:300])
        assert "Traceback" not in response.text
        if response.status_code == 400:
            assert response.json()["jsonrpc"] == "2.0"


def test_stdio_answers_every_request_whatever_it_holds(
    acme: Tenant, stdio_env: Callable[..., dict[str, str]], spawn_stdio: Callable[..., subprocess.Popen[bytes]]
) -> None:
    process = spawn_stdio(stdio_env(acme.raw_tokens["agent"]))
    handshake(process)
    assert process.stdin is not None
    lines = st.one_of(
        JSON.map(lambda value: {"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": value}),
        st.tuples(st.sampled_from(sorted(TOOLS)), JSON).map(
            lambda call: {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "tools/call",
                "params": {"name": call[0], "arguments": call[1]},
            }
        ),
    )
    answered = 0

    @FUZZ
    @given(message=lines)
    def one(message: dict[str, Any]) -> None:
        nonlocal answered
        answered += 1
        message["id"] = 1000 + answered
        process.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]
        answer = read_message(process, timeout=30)
        assert answer.get("id") == message["id"], (message, answer)
        assert "Traceback" not in json.dumps(answer)

    one()
    garbage = [b"{not json", b"[]", b"42", b'"text"', b'{"jsonrpc": "2.0", "id": 5}', b"\xff\xfe"]
    for line in garbage:
        process.stdin.write(line + b"\n")
        process.stdin.flush()
        answer = read_message(process, timeout=30)
        assert "error" in answer, (line, answer)
    assert process.poll() is None and answered >= 10
