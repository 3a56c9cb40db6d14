"""Keep-alive connections spread evenly over the web processes of one server.

The kernel hands each new connection to one of the web processes (each listens on the port with
SO_REUSEPORT, and the kernel picks by the connection's addresses), and a keep-alive connection
stays with that process for as long as the client keeps it open. When clients connect at once,
one process often gets most of them: with 16 clients, 11 on one process and 5 on the other was
common. Each process then serves the same number of requests a second (it has the same threads
and cores), so the crowded one's clients wait twice as long: on the load benchmark, p50 138 ms
against 63 ms, which made the server's p95 that of its worse half.

So each web process looks, twice a second, at how many connections every process of its server
holds (from /proc: the connections each one has open on the server's port). A process holding
more than its share (all of them divided by the number of processes, rounded up) answers one
request with ``Connection: close``; the client, which HTTP/1.1 lets close at any response, opens
a new connection, from another port, which the kernel may hand to another process. This repeats
until the counts are even. It costs a client one new connection now and then, and nothing when
the counts are even or when there is one process. Where /proc is missing (not Linux) or another
process's descriptors cannot be read, nothing happens. WEB_REBALANCE=0 turns it off.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_platform.env import env_bool
from memory_platform.heap import WSGIApp

logger = logging.getLogger(__name__)

PROC = Path("/proc")
INTERVAL_SECONDS = 0.5
_LISTEN, _ESTABLISHED = "0A", "01"


@dataclass(frozen=True)
class _Sockets:
    """The TCP sockets of the machine (this network namespace) on the ports that listen."""

    listening: dict[int, int]  # inode -> port
    established: dict[int, int]  # inode -> local port


def _tcp_sockets(families: tuple[str, ...] = ("tcp", "tcp6")) -> _Sockets:
    # The kernel writes these files by walking its whole TCP table: about 1.7 ms of CPU each here.
    listening: dict[int, int] = {}
    established: dict[int, int] = {}
    for name in families:
        try:
            lines = (PROC / "net" / name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10:
                continue
            state, inode = fields[3], int(fields[9])
            port = int(fields[1].rsplit(":", 1)[1], 16)
            if state == _LISTEN:
                listening[inode] = port
            elif state == _ESTABLISHED and inode:
                established[inode] = port
    return _Sockets(listening, established)


def _socket_inodes(pid: int) -> set[int]:
    inodes: set[int] = set()
    fds = PROC / str(pid) / "fd"
    try:
        names = os.listdir(fds)
    except OSError:
        return inodes
    for name in names:
        try:
            target = os.readlink(fds / name)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    try:
        tasks = os.listdir(PROC / str(pid) / "task")
    except OSError:
        return found
    for task in tasks:
        try:
            found.update(int(child) for child in (PROC / str(pid) / "task" / task / "children").read_text().split())
        except OSError:
            continue
    return found


def connections_per_process(pid: int | None = None) -> dict[int, int]:
    """For the web process ``pid`` (this one) and its siblings listening on the same port: how many
    established connections each holds on that port. Empty when /proc cannot tell.

    Each web process listens on a socket of its own (SO_REUSEPORT: the kernel spreads new
    connections over them by address), so siblings are told by the port, not by the socket.
    """
    pid = os.getpid() if pid is None else pid
    own = _socket_inodes(pid)
    sockets = _tcp_sockets(("tcp",))  # IPv6 only when the server does not listen on IPv4

    def listening_ports(inodes: set[int]) -> set[int]:
        return {sockets.listening[inode] for inode in inodes if inode in sockets.listening}

    ports = listening_ports(own)
    if not ports:
        sockets = _tcp_sockets()
        ports = listening_ports(own)
    if not ports:
        return {}
    parent = _parent(pid)
    candidates = (_children(parent) if parent else set()) | {pid}
    counts: dict[int, int] = {}
    for candidate in candidates:
        inodes = own if candidate == pid else _socket_inodes(candidate)
        if listening_ports(inodes) & ports:  # a web process of this server
            counts[candidate] = sum(1 for inode in inodes if sockets.established.get(inode) in ports)
    return counts


def _parent(pid: int) -> int | None:
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (2nd field) is in parentheses and may hold spaces: the rest follows the last one.
    return int(stat.rsplit(")", 1)[1].split()[1])


def excess(counts: Mapping[int, int], pid: int) -> int:
    """How many connections ``pid`` holds beyond its share: the total over the processes, rounded up."""
    if len(counts) < 2 or pid not in counts:
        return 0
    share = math.ceil(sum(counts.values()) / len(counts))
    return max(0, counts[pid] - share)


class ConnectionBalancer:
    """The WSGI middleware: ``Connection: close`` on one response of a process over its share.

    A thread started at the first request looks at the counts and allows one close per look, so
    the counts move a connection at a time and are looked at again (where the client reconnected)
    before the next one. It looks every ``interval`` seconds while this process is over its share,
    and four times less often otherwise (a look costs a few milliseconds of the kernel's CPU).
    """

    def __init__(
        self,
        application: WSGIApp,
        *,
        interval: float = INTERVAL_SECONDS,
        counts: Callable[[], dict[int, int]] = connections_per_process,
    ) -> None:
        self.application = application
        self.interval = interval
        self.counts = counts
        self.enabled = env_bool("WEB_REBALANCE", True) and PROC.joinpath("net", "tcp").exists()
        self._close_one = threading.Event()
        self._started = False
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if not self.enabled or environ.get("SERVER_PROTOCOL") != "HTTP/1.1":
            return self.application(environ, start_response)
        if not self._started:
            self._start()
        if not self._close_one.is_set():
            return self.application(environ, start_response)
        with self._lock:
            closing = self._close_one.is_set()
            self._close_one.clear()
        if not closing:
            return self.application(environ, start_response)

        def start_closing(status: str, headers: list[tuple[str, str]], *args: Any) -> Any:
            kept = [(name, value) for name, value in headers if name.lower() != "connection"]
            return start_response(status, [*kept, ("Connection", "close")], *args)

        return self.application(environ, start_closing)

    def _start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._watch, name="connection-balancer", daemon=True).start()

    def _watch(self) -> None:
        pid = os.getpid()
        delay = self.interval
        while True:
            time.sleep(delay)
            try:
                over = excess(self.counts(), pid)
            except Exception:  # never let a /proc surprise end the thread or reach a request
                logger.exception("could not count the web processes' connections; connections stay where they are")
                return
            if over > 0:
                self._close_one.set()
                delay = self.interval
            else:
                self._close_one.clear()
                delay = 4 * self.interval
