"""Every argument of every tool, set to each of four hostile values, over HTTP and over stdio: every
request gets exactly one answer, carrying its own id, and none is an internal error.

The values: a lone UTF-16 surrogate (valid JSON, not valid Unicode), a NUL character, an object
nested 500 deep, and 2**64. A stdio client matches answers to questions by id alone, so an answer
without the request's id is, to it, no answer at all.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_api.registry import offered
from tests.artifacts import record
from tests.conftest import Tenant
from tests.mcp.http import bearer
from tests.mcp.stdio import handshake, read_message

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.mcp_live]

INTERNAL = ("internal error", "Traceback", "Error executing tool", "-32603")


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


HOSTILE: dict[str, Any] = {"lone surrogate": "\ud800", "nul": "a\x00b", "nested 500 deep": _deep(500), "2**64": 2**64}
TOOLS = {tool.name: tool.input_schema for tool in offered().tools.values()}


def _requests() -> Iterator[tuple[str, dict[str, Any]]]:
    """(what it is, the request) for every tool, argument and hostile value, ids from 1."""
    request_id = 0
    for name, schema in sorted(TOOLS.items()):
        for argument in sorted(schema.get("properties", {})):
            for label, value in HOSTILE.items():
                request_id += 1
                request = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                           "params": {"name": name, "arguments": {argument: value}}}  # fmt: skip
                yield f"{name}.{argument} = {label}", request


def _line(request: dict[str, Any]) -> bytes:
    # json.dumps writes a lone surrogate as the escape \ud800, as a hostile client would send it.
    return json.dumps(request).encode()


def _check(what: str, request: dict[str, Any], answer: dict[str, Any]) -> None:
    assert answer.get("id") == request["id"], (what, answer)
    assert ("result" in answer) != ("error" in answer), (what, answer)
    text = json.dumps(answer)
    for internal in INTERNAL:
        assert internal not in text, (what, text[:500])


def test_http_answers_every_hostile_argument_with_its_id(mcp_url: str, mcp_server_log: Path, acme: Tenant) -> None:
    answered = 0
    with httpx.Client(headers=bearer(acme.raw_tokens["agent"]), timeout=60) as client:  # keep-alive, as agents
        for what, request in _requests():
            response = client.post(mcp_url, content=_line(request))
            assert response.status_code in (200, 400), (what, response.status_code, response.text[:300])
            _check(what, request, response.json())
            answered += 1
    assert answered >= 4 * len(TOOLS)
    assert "Traceback" not in mcp_server_log.read_text(errors="replace")
    record("hardening", "hostile values in every tool argument over live HTTP /mcp", answered)


def test_stdio_answers_every_hostile_argument_with_its_id(
    acme: Tenant, stdio_env: Callable[..., dict[str, str]], spawn_stdio: Callable[..., subprocess.Popen[bytes]]
) -> None:
    process = spawn_stdio(stdio_env(acme.raw_tokens["agent"]))
    handshake(process)
    assert process.stdin is not None
    requests = list(_requests())
    stdin = process.stdin

    def write_all() -> None:  # all at once, as a busy client may, while the answers are read
        for _, request in requests:
            stdin.write(_line(request) + b"\n")
        stdin.flush()

    writer = threading.Thread(target=write_all, daemon=True)
    writer.start()
    answers: dict[Any, dict[str, Any]] = {}
    for _ in requests:
        answer = read_message(process, timeout=120)
        assert answer.get("id") not in answers, ("answered twice", answer)
        answers[answer.get("id")] = answer
    writer.join(timeout=60)
    for what, request in requests:
        _check(what, request, answers.get(request["id"], {}))
    assert process.poll() is None
    _, stderr = process.communicate(timeout=60)
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")[-2000:]
    record("hardening", "hostile values in every tool argument over stdio", len(answers))
