"""Keep-alive connections spread evenly over a server's web processes (memory_platform.balance):
each process counts every sibling's connections from /proc, and one holding more than its share
answers a request with ``Connection: close`` so that its client reconnects elsewhere."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from memory_platform import balance
from memory_platform.balance import ConnectionBalancer, connections_per_process, excess
from tests.live_server import start_server, stop

pytestmark = pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="the balancer reads Linux's /proc")


def test_the_share_is_the_total_over_the_processes_rounded_up() -> None:
    assert excess({1: 11, 2: 5}, 1) == 3
    assert excess({1: 11, 2: 5}, 2) == 0
    assert excess({1: 9, 2: 8}, 1) == 0  # 17 over 2: a share of 9
    assert excess({1: 7, 2: 1, 3: 1}, 1) == 4
    assert excess({1: 12}, 1) == 0  # alone: nowhere else to go
    assert excess({}, 1) == 0
    assert excess({2: 4, 3: 0}, 1) == 0  # not one of them


# --- counting from /proc ------------------------------------------------------------------------

_HOLD = "import sys; sys.stdin.read()"  # keeps the descriptors it was given until stdin closes


def _listener(port: int = 0) -> socket.socket:
    """A listening socket as each web process has one: SO_REUSEPORT, on the server's port."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    server.bind(("127.0.0.1", port))
    server.listen()
    return server


def _hold(fds: list[int]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", _HOLD], stdin=subprocess.PIPE, pass_fds=fds)


def _accept_all(listeners: list[socket.socket], count: int) -> list[socket.socket]:
    accepted: list[socket.socket] = []
    deadline = time.monotonic() + 10
    while len(accepted) < count:
        assert time.monotonic() < deadline, "the connections were not accepted"
        ready, _, _ = select.select(listeners, [], [], 1)
        accepted += [listener.accept()[0] for listener in ready]
    return accepted


def test_each_process_listening_on_the_port_is_counted() -> None:
    first_listener = _listener()
    port = first_listener.getsockname()[1]
    second_listener = _listener(port)
    clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(5)]
    accepted = _accept_all([first_listener, second_listener], len(clients))
    # Two "web processes" listening on the port, one holding 2 of the connections, the other 3.
    first = _hold([first_listener.fileno(), *(conn.fileno() for conn in accepted[:2])])
    second = _hold([second_listener.fileno(), *(conn.fileno() for conn in accepted[2:])])
    # Not a web process of this server: it holds a connection but listens on nothing.
    other = _hold([clients[0].fileno()])
    for sock in [first_listener, second_listener, *accepted]:
        sock.close()  # only the children hold them now
    try:
        expected = {first.pid: 2, second.pid: 3}
        assert connections_per_process(first.pid) == expected
        assert connections_per_process(second.pid) == expected
        assert excess(expected, second.pid) == 0  # 5 over 2: a share of 3
        assert connections_per_process(other.pid) == {}
    finally:
        for child in (first, second, other):
            child.communicate(b"")
        for client in clients:
            client.close()


# --- the middleware -------------------------------------------------------------------------------


def _app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain"), ("Connection", "keep-alive")])
    return [b"ok"]


def _headers(app: ConnectionBalancer, protocol: str = "HTTP/1.1") -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    body = app({"SERVER_PROTOCOL": protocol}, lambda status, headers, *args: seen.extend(headers))
    assert list(body) == [b"ok"]
    return seen


def _wait_until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.01)


def test_a_process_over_its_share_closes_one_connection_a_look(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEB_REBALANCE", raising=False)
    counts = {os.getpid(): 11, os.getpid() + 1: 5}
    looks: list[int] = []

    def count() -> dict[int, int]:
        looks.append(1)
        return dict(counts)

    app = ConnectionBalancer(_app, interval=0.05, counts=count)
    assert ("Connection", "close") not in _headers(app)  # the first request starts the watcher
    _wait_until(app._close_one.is_set)
    closing = _headers(app)
    assert closing == [("Content-Type", "text/plain"), ("Connection", "close")]  # replaces keep-alive
    assert ("Connection", "close") not in _headers(app)  # one per look, not every request

    counts[os.getpid()] = 8
    counts[os.getpid() + 1] = 8
    seen = len(looks)
    _wait_until(lambda: len(looks) > seen + 1)
    assert all(("Connection", "close") not in _headers(app) for _ in range(20))


def test_it_is_off_when_asked_and_for_other_protocols(monkeypatch: pytest.MonkeyPatch) -> None:
    over = {os.getpid(): 10, os.getpid() + 1: 0}
    monkeypatch.setenv("WEB_REBALANCE", "0")
    off = ConnectionBalancer(_app, interval=0.01, counts=lambda: over)
    _headers(off)
    time.sleep(0.1)
    assert ("Connection", "close") not in _headers(off)

    monkeypatch.delenv("WEB_REBALANCE")
    on = ConnectionBalancer(_app, interval=0.01, counts=lambda: over)
    _headers(on)
    _wait_until(on._close_one.is_set)
    assert ("Connection", "close") not in _headers(on, "HTTP/2")  # no Connection header in HTTP/2
    assert ("Connection", "close") in _headers(on)


# --- a real server ----------------------------------------------------------------------------------


def _web_processes(server: subprocess.Popen[bytes]) -> list[int]:
    deadline = time.monotonic() + 30
    while len(workers := sorted(balance._children(server.pid))) < 2:
        assert time.monotonic() < deadline, "the web processes did not start"
        time.sleep(0.1)
    return workers


class _Client:
    """One keep-alive HTTP/1.1 connection, reopened when the server answers ``Connection: close``."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock: socket.socket | None = None
        self.reconnects = 0

    def get(self, path: str) -> int:
        if self.sock is None:
            self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
            self.reconnects += 1
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        reader = self.sock.makefile("rb")
        status = int(reader.readline().split()[1])
        headers = {}
        while (line := reader.readline().strip()) != b"":
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip().lower()
        reader.read(int(headers.get("content-length", "0")))
        reader.close()
        if headers.get("connection") == "close":
            self.close()
        return status

    @property
    def local_port(self) -> int:
        assert self.sock is not None
        return int(self.sock.getsockname()[1])

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def _process_of(clients: list[_Client], workers: list[int], server_port: int) -> dict[int, int]:
    """Which web process holds each client's connection (client's local port -> pid), from /proc."""
    peer_of_inode: dict[int, int] = {}
    for name in ("tcp", "tcp6"):
        for line in Path("/proc/net", name).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote = int(fields[1].rsplit(":", 1)[1], 16), int(fields[2].rsplit(":", 1)[1], 16)
            if local == server_port and fields[3] == "01":
                peer_of_inode[int(fields[9])] = remote
    holder: dict[int, int] = {}
    for pid in workers:
        for inode in balance._socket_inodes(pid):
            if inode in peer_of_inode:
                holder[peer_of_inode[inode]] = pid
    return {client.local_port: holder[client.local_port] for client in clients}


def test_connections_crowded_on_one_web_process_spread_over_both(
    db: Any, server_env: dict[str, str], tmp_path: Path
) -> None:
    server, base_url = start_server(server_env, tmp_path / "server.log", workers=2)
    port = int(base_url.rsplit(":", 1)[1])
    clients: list[_Client] = []
    try:
        workers = _web_processes(server)
        _wait_for(lambda: len(connections_per_process(workers[0])) == 2, 60)  # both serve the socket
        # Crowd one process: of 40 connections, keep the 12 it accepted first (it took at least 20).
        clients = [_Client(port) for _ in range(40)]
        assert all(client.get("/healthz") == 200 for client in clients)
        # The balancing may already have told a client of the crowded process to close: it holds none.
        clients = [client for client in clients if client.sock is not None]
        holder = _process_of(clients, workers, port)
        crowded = max(workers, key=lambda pid: sum(1 for held in holder.values() if held == pid))
        kept = [client for client in clients if holder[client.local_port] == crowded][:12]
        for client in clients:
            if client not in kept:
                client.close()
        clients = kept
        _wait_for(lambda: connections_per_process(crowded)[crowded] == 12)
        assert sorted(connections_per_process(crowded).values()) == [0, 12]

        deadline = time.monotonic() + 60
        statuses: set[int] = set()
        while sorted(counts := connections_per_process(crowded).values()) != [6, 6]:
            assert time.monotonic() < deadline, f"still {counts} after 60 s"
            for client in clients:  # every client keeps asking, as agents do
                statuses.add(client.get("/healthz"))
            time.sleep(0.05)
        assert statuses == {200}  # a client told to close reconnects; nothing fails
        assert sum(client.reconnects for client in clients) >= 12 + 6  # at least 6 moved
    finally:
        for client in clients:
            client.close()
        stop(server)


def _wait_for(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.05)
