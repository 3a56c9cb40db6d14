"""Fuzzing every MCP tool from its own input schema, and the transports with raw garbage.

For each tool in tools/list, hypothesis generates arguments from the tool's inputSchema and calls
it (in-process, through the real /mcp view, and over a stdio process); then raw JSON-RPC bodies and
lines of every shape (lone surrogates included) go to a live /mcp and to the stdio process.
Whatever comes in, every request is answered, in JSON-RPC's shape, with no internal error (-32603
or "internal error") and no traceback, neither in the answers nor in the server's logs. A new tool
is fuzzed without anyone writing a test. How many inputs each part answered goes to
test-artifacts/hardening.json.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_api.registry import offered
from tests.artifacts import record
from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.mcp.conftest import Connect
from tests.mcp.http import bearer
from tests.mcp.stdio import handshake, read_message
from tests.oauth import oauth_access_token

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.mcp_live]

TOOLS = {tool.name: tool.input_schema for tool in offered().tools.values()}
INTERNAL = ("internal error", "Traceback", "Error executing tool", "-32603")
FUZZ = settings(
    max_examples=15,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
# Text as JSON can spell it: any character, lone UTF-16 surrogates ("\ud800") included.
ANY_TEXT = st.text(alphabet=st.characters() | st.characters(categories=["Cs"]), max_size=40)
# Any JSON value: what a careless or hostile client may send anywhere.
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | ANY_TEXT,
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


@pytest.mark.parametrize("caller", ["token", "oauth"])
@pytest.mark.parametrize("name", sorted(TOOLS))
def test_every_tool_answers_whatever_its_schema_allows(
    acme: Tenant, agent: McpClient, name: str, caller: str, *, connect: Connect, endpoint: str
) -> None:
    """As an agent with an API token, and as an MCP host signed in with OAuth for an agent person."""
    if caller == "oauth":
        assert acme.person.user is not None
        agent = connect(oauth_access_token(acme.person.user, organization="acme", role="agent", resource=endpoint))
    calls = 0

    @FUZZ
    @given(arguments=from_schema(TOOLS[name]))
    def one(arguments: dict[str, Any]) -> None:
        nonlocal calls
        calls += 1
        result = agent.call(name, arguments)
        for internal in INTERNAL:
            assert internal not in result.text, (name, arguments, result.text[:500])

    one()
    record("hardening", f"fuzz: {name} over in-process /mcp ({caller})", calls)


def test_http_answers_any_json_rpc_body(mcp_url: str, mcp_server_log: Path, acme: Tenant) -> None:
    sent = 0

    @FUZZ
    @given(body=JSON, method=st.sampled_from(["tools/call", "tools/list", "resources/read", "prompts/get", "nope"]))
    def one(body: Any, method: str) -> None:
        nonlocal sent
        for payload in (body, {"jsonrpc": "2.0", "id": 7, "method": method, "params": body}):
            sent += 1
            response = httpx.post(
                mcp_url, headers=bearer(acme.raw_tokens["agent"]), content=json.dumps(payload), timeout=30
            )
            assert response.status_code in (200, 202, 400), (payload, response.status_code, response.text[:300])
            for internal in INTERNAL:
                assert internal not in response.text, (payload, response.text[:300])
            if isinstance(payload, dict) and "id" in payload and "method" in payload:
                # A request (it has an id) is answered, never merely accepted.
                assert response.status_code != 202, (payload, response.text[:300])
            if response.status_code == 400:
                assert response.json()["jsonrpc"] == "2.0"

    one()
    assert "Traceback" not in mcp_server_log.read_text(errors="replace")
    record("hardening", "fuzz: raw JSON-RPC bodies over live HTTP /mcp", sent)


def test_stdio_answers_every_request_whatever_it_holds(
    acme: Tenant, stdio_env: Callable[..., dict[str, str]], spawn_stdio: Callable[..., subprocess.Popen[bytes]]
) -> None:
    process = spawn_stdio(stdio_env(acme.raw_tokens["agent"]))
    handshake(process)
    # The handshake is answered before the server has loaded; the first tools/list waits for it, so
    # the fuzzed requests' time limit below measures answering, not starting (slow on a busy machine).
    process.stdin.write(b'{"jsonrpc": "2.0", "id": 999, "method": "tools/list"}\n')  # type: ignore[union-attr]
    process.stdin.flush()  # type: ignore[union-attr]
    assert read_message(process, timeout=120)["id"] == 999
    assert process.stdin is not None
    raw = st.one_of(
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
    # And each tool's own schema, as over HTTP: arguments the tool takes, in every shape it allows.
    by_schema = st.one_of(
        [
            from_schema(schema).map(
                lambda arguments, name=name: {
                    "jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": name, "arguments": arguments},
                }
            )
            for name, schema in sorted(TOOLS.items())
        ]
    )  # fmt: skip
    answered = 0

    def ask(message: dict[str, Any]) -> None:
        nonlocal answered
        answered += 1
        message["id"] = 1000 + answered
        process.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]
        answer = read_message(process, timeout=30)
        assert answer.get("id") == message["id"], (message, answer)
        for internal in INTERNAL:
            assert internal not in json.dumps(answer), (message, answer)

    @FUZZ
    @given(message=raw)
    def raw_lines(message: dict[str, Any]) -> None:
        ask(message)

    @settings(FUZZ, max_examples=15 * len(TOOLS))
    @given(message=by_schema)
    def tool_calls(message: dict[str, Any]) -> None:
        ask(message)

    raw_lines()
    tool_calls()
    garbage = [b"{not json", b"[]", b"42", b'"text"', b'{"jsonrpc": "2.0", "id": 5}', b"\xff\xfe", b'"\\ud800"']
    for line in garbage:
        process.stdin.write(line + b"\n")
        process.stdin.flush()
        answer = read_message(process, timeout=30)
        assert "error" in answer, (line, answer)
    assert process.poll() is None and answered >= 10 * len(TOOLS)
    _, stderr = process.communicate(timeout=60)
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")[-2000:]
    record("hardening", "fuzz: tools/call lines over stdio (raw and per tool schema)", answered + len(garbage))
