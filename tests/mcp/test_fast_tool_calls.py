"""tools/call answered without the MCP library's session machinery (mcp_api/fast.py) says the same bytes.

Each request goes through the real /mcp view twice, with the fast path on and off; the library's
answer is the reference. Calls the fast path must leave to the library (invalid arguments, _meta,
unusual headers) are checked to be answered by it, with its messages.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client, override_settings

from mcp_api import fast
from tests.conftest import MemoryFactory, Tenant

pytestmark = pytest.mark.django_db

HEADERS = {"Accept": "application/json, text/event-stream"}


def _post(tenant: Tenant, body: dict[str, Any], *, fast_path: bool, **headers: str) -> Any:
    with override_settings(MCP_FAST_TOOL_CALLS=fast_path):
        return Client().post(
            "/mcp",
            data=json.dumps(body),
            content_type=headers.pop("content_type", "application/json"),
            headers={**HEADERS, "Authorization": f"Bearer {tenant.raw_tokens['agent']}", **headers},
        )


def _call(name: str, arguments: dict[str, Any] | None, request_id: int | str = 7) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


@pytest.fixture
def answered_here(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the tools/calls the fast path answered."""
    answered: list[str] = []
    original = fast.tool_call

    def spy(request: Any, payload: Any) -> Any:
        response = original(request, payload)
        if response is not None:
            answered.append(payload["params"]["name"])
        return response

    monkeypatch.setattr(fast, "tool_call", spy)
    return answered


def test_reads_get_the_same_bytes_either_way(
    acme: Tenant, make_memory: MemoryFactory, answered_here: list[str]
) -> None:
    memory = make_memory(current_content="Deploys to production need a green pipeline and a second reviewer.")
    make_memory(current_content="The billing service retries webhooks three times.", tags=["billing"])
    calls = [
        _call("memory-search", {"query": "what do deploys need?", "limit": 5}),
        _call("memory-search", {"query": "billing webhooks", "mode": "keyword"}, request_id="a-string-id"),
        _call("memory-get", {"id": str(memory.pk)}),
        _call("memory-list", {"limit": 1}),
        _call("memory-get", {"id": "00000000-0000-4000-8000-000000000000"}),  # a domain error: isError
    ]
    for body in calls:
        library = _post(acme, body, fast_path=False)
        here = _post(acme, body, fast_path=True)

        assert here.status_code == library.status_code == 200
        assert here["Content-Type"] == library["Content-Type"] == "application/json"
        assert here.content == library.content, body
    assert answered_here == ["memory-search", "memory-search", "memory-get", "memory-list", "memory-get"]
    assert json.loads(here.content)["result"]["isError"] is True


def test_a_write_is_answered_in_the_same_shape(acme: Tenant, answered_here: list[str]) -> None:
    body = _call("memory-write", {"scope_type": "organization", "memory_type": "fact", "current_content": "X is Y."})
    library = json.loads(_post(acme, body, fast_path=False).content)
    here = json.loads(_post(acme, body, fast_path=True).content)

    assert answered_here == ["memory-write"]
    assert here.keys() == library.keys() == {"jsonrpc", "id", "result"}
    assert here["result"].keys() == library["result"].keys()
    written = json.loads(here["result"]["content"][0]["text"])
    assert written["current_content"] == "X is Y."
    assert here["result"]["isError"] is False


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (_call("memory-search", {"query": "x", "limti": 5}), {}),  # an argument the tool does not take
        (_call("memory-search", {"query": 5}), {}),  # a wrong type
        (_call("memory-write", {"memory_type": "fact"}), {}),  # a missing argument
        (_call("no-such-tool", {}), {}),
        ({**_call("memory-search", {"query": "x"}), "params": {"name": "memory-search", "_meta": {}}}, {}),
        (_call("memory-search", {"query": "x"}), {"MCP-Protocol-Version": "1999-01-01"}),
        (_call("memory-search", {"query": "x"}), {"Accept": "text/event-stream"}),
        ({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "memory-search"}}, {}),  # a notification
    ],
)
def test_what_the_fast_path_leaves_to_the_library(
    acme: Tenant, answered_here: list[str], body: dict[str, Any], headers: dict[str, str]
) -> None:
    library = _post(acme, body, fast_path=False, **headers)
    here = _post(acme, body, fast_path=True, **headers)

    assert answered_here == []
    assert (here.status_code, here.content) == (library.status_code, library.content)
