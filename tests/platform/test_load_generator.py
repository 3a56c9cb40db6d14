"""bench/load.py's hand-written HTTP/1.1 client reads what servers send: a Content-Length body or
chunks, several requests on one keep-alive connection, and a connection the server closes."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter

import pytest

from bench.load import MIX, Workload, _Http, parse_mix

RESPONSES = [
    b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"a": true}',
    b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n[1, 2\r\n3;ext=1\r\n, 3\r\n1\r\n]\r\n0\r\n\r\n",
    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
]


async def _exchange() -> tuple[list[tuple[int, bytes]], list[bytes], int]:
    requests: list[bytes] = []
    connections = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        while len(requests) < len(RESPONSES):
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                break
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                ),
                0,
            )
            requests.append(head + await reader.readexactly(length))
            writer.write(RESPONSES[len(requests) - 1])
            await writer.drain()
            if b"Connection: close" in RESPONSES[len(requests) - 1]:
                break
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    http = _Http(f"http://127.0.0.1:{port}", "mp_token")
    answers = [
        await http.request("POST", "/api/v1/memories/search/", {"query": "x"}),
        await http.request("GET", "/api/v1/memories/1/"),
        await http.request("GET", "/api/v1/memories/2/"),
    ]
    closed = http.reader is None
    await http.close()
    server.close()
    await server.wait_closed()
    assert closed  # the server said Connection: close
    return answers, requests, connections


def test_bodies_by_length_and_by_chunks_on_one_connection() -> None:
    answers, requests, connections = asyncio.run(_exchange())

    assert answers[0] == (200, b'{"a": true}')
    assert answers[1] == (201, b"[1, 2, 3]")
    assert json.loads(answers[1][1]) == [1, 2, 3]
    assert answers[2] == (404, b"")
    assert connections == 1
    first = requests[0].decode()
    assert first.startswith("POST /api/v1/memories/search/ HTTP/1.1\r\n")
    assert "Authorization: Bearer mp_token\r\n" in first
    assert first.endswith('Content-Length: 14\r\n\r\n{"query": "x"}')
    assert requests[1].startswith(b"GET /api/v1/memories/1/ HTTP/1.1\r\n")


def test_the_mix_is_read_as_weights_in_the_operations_order() -> None:
    assert parse_mix("search=70,write=20,get=10") == MIX
    assert parse_mix(" get=1, search=7 ") == (("search", 0.875), ("get", 0.125))
    assert parse_mix("write=3,get=0") == (("write", 1.0),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("search=70,delete=30", "unknown operation 'delete' in --mix: use search, write, get"),
        ("search=seventy", "search's weight in --mix must be a number, as search=20, not 'seventy'"),
        ("search", "search's weight in --mix must be a number"),
        ("search=-1,get=2", "search's weight in --mix must be 0 or more, not -1"),
        ("search=nan", "search's weight in --mix must be 0 or more, not nan"),
        ("search=1,search=2", "search is given twice in --mix"),
        ("search=0,get=0", "--mix needs at least one operation with a weight above 0"),
    ],
)
def test_a_bad_mix_says_what_to_fix(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_mix(text)


def test_clients_send_the_mix_asked_for() -> None:
    work = Workload(["q"], ["t"], ["id"], seed=3, mix=parse_mix("search=3,get=1"))

    picks = Counter(work.pick() for _ in range(4000))

    assert set(picks) == {"search", "get"}
    assert 0.72 < picks["search"] / 4000 < 0.78
