"""Every log line of a request carries its id, organization and principal (never a token or a
memory's text), and the id comes back in X-Request-ID: the client's when it is well-formed."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator

import pytest
from django.test import Client

from memory_platform import logs
from tests.conftest import MemoryFactory, Tenant
from tests.mcp.http import bearer

pytestmark = pytest.mark.django_db

NEW_ID = re.compile(r"[0-9a-f]{32}")


@pytest.fixture
def lines() -> Iterator[io.StringIO]:
    """What the root logger writes during the test, as the JSON lines production writes."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(logs.ContextFilter())
    handler.setFormatter(logs.formatter("json"))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield out
    finally:
        root.removeHandler(handler)


def test_a_well_formed_request_id_is_kept_and_any_other_replaced(client: Client, acme: Tenant) -> None:
    headers = bearer(acme.raw_tokens["reader"])

    kept = client.get("/api/v1/repositories/", headers={**headers, "X-Request-ID": "deploy-42.a:b_c"})
    replaced = client.get("/api/v1/repositories/", headers={**headers, "X-Request-ID": "no spaces\tor tabs"})
    too_long = client.get("/api/v1/repositories/", headers={**headers, "X-Request-ID": "a" * 129})
    refused = client.post("/mcp", {}, "application/json")

    assert kept["X-Request-ID"] == "deploy-42.a:b_c"
    assert NEW_ID.fullmatch(replaced["X-Request-ID"]) and NEW_ID.fullmatch(too_long["X-Request-ID"])
    assert refused.status_code == 401 and NEW_ID.fullmatch(refused["X-Request-ID"])


def test_the_lines_of_a_request_say_whose_it_was(
    client: Client, acme: Tenant, make_memory: MemoryFactory, lines: io.StringIO
) -> None:
    secret_text = "The vault passphrase rotates on the first Monday."
    memory = make_memory(current_content=secret_text)
    token = acme.raw_tokens["agent"]
    missing = "/api/v1/memories/00000000-0000-0000-0000-000000000000/"

    client.get(f"/api/v1/memories/{memory.pk}/", headers={**bearer(token), "X-Request-ID": "req-read"})
    client.get(missing, headers={**bearer(token), "X-Request-ID": "req-missing"})
    mcp = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "no-such-tool", "arguments": {}}}
    client.post("/mcp", mcp, "application/json", headers={**bearer(token), "X-Request-ID": "req-mcp"})

    written = [json.loads(line) for line in lines.getvalue().splitlines()]
    [not_found] = [line for line in written if line["request_id"] == "req-missing"]
    assert not_found["message"] == f"Not Found: {missing}"
    assert not_found["level"] == "WARNING" and not_found["logger"] == "django.request"
    assert not_found["organization"] == "acme"
    assert not_found["principal"] == acme.agent.label and "token" in not_found["principal"]
    assert {"time", "level", "logger", "message", "request_id", "organization", "principal"} <= set(not_found)
    everything = lines.getvalue()
    assert token not in everything and token.split("_", 2)[-1] not in everything  # mp_<id>_<secret>
    assert secret_text not in everything
    assert logs.current() == {}, "nothing stays bound after the request"
