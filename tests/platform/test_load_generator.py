"""bench/load.py's hand-written HTTP/1.1 client reads what servers send: a Content-Length body or
chunks, several requests on one keep-alive connection, and a connection the server closes."""

from __future__ import annotations

import asyncio
import json

from bench.load import _Http

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
