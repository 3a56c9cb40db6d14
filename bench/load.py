"""Many agents at once: a bounded mixed load on loopback, over REST and MCP.

``--clients`` concurrent clients (asyncio, one keep-alive HTTP/1.1 connection each, written and read
by hand, so the generator costs the server's cores little) send, for ``--seconds`` or until
``--max-requests``, a mix of searches (70%), writes (20%) and gets (10%), half over REST and half
over MCP (stateless Streamable HTTP, JSON-RPC over POST); ``--mix search=85,get=15`` sends another
mix. Then one short phase per request type of the mix measures the server's CPU time per
request (from /proc, the server and its children). Reports requests/s, p50/p95/p99 per operation
and transport, errors, the generator's own CPU, and CPU ms per request type.

Either against a server started here (``manage.py serve``, as ``make run`` starts it: its web
processes and its worker) on a fresh copy of a database seeded with ``--memories`` synthetic
memories, so that runs compare (``--keep`` keeps the seeded one for the next run):

    python bench/load.py --memories 10000 --clients 16 --seconds 60 --json bench/results/$(date +%F)/load.json

or against one already running (``--url``, loopback only, with an agent ``--token``):

    python bench/load.py --url http://127.0.0.1:8000 --token mp_... --clients 8 --seconds 30
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import math
import os
import random
import resource
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import REPO, bench_database, database_url, free_port, percentile, print_table, write_json

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
MIX = (("search", 0.7), ("write", 0.2), ("get", 0.1))
OPERATIONS = tuple(operation for operation, _ in MIX)
MCP_ACCEPT = "application/json, text/event-stream"
# What MCP clients send with each request per revision: nothing for 2025-11-25 (a stateless server
# needs no handshake); for 2026-07-28 the _meta envelope, and the headers that repeat the revision,
# the method and the tool's name.
MCP_REVISIONS = ("2025-11-25", "2026-07-28")
MODERN_ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench-load", "version": "1"},
}
CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass
class Tally:
    """Latencies (seconds) and errors, per (operation, transport)."""

    times: dict[tuple[str, str], list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    examples: list[str] = field(default_factory=list)
    connections: int = 0  # opened, the first of each client's included (a server's Connection: close opens more)
    web_connections: list[int] = field(default_factory=list)  # per web process, three quarters in

    @property
    def count(self) -> int:
        return sum(len(times) for times in self.times.values()) + sum(self.errors.values())


class Workload:
    """What the clients send: queries and texts of one organization, ids of memories it holds."""

    def __init__(
        self,
        queries: list[str],
        texts: list[str],
        ids: list[str],
        seed: int,
        mix: tuple[tuple[str, float], ...] = MIX,
    ) -> None:
        self.queries, self.texts, self.ids = queries, texts, ids
        self.mix = mix
        self.rng = random.Random(seed)
        self.counter = itertools.count()

    def pick(self) -> str:
        roll, total = self.rng.random(), 0.0
        for operation, share in self.mix:
            total += share
            if roll < total:
                return operation
        return self.mix[-1][0]

    def search(self) -> dict[str, Any]:
        return {"query": self.rng.choice(self.queries), "limit": 10}

    def write(self) -> dict[str, Any]:
        n = next(self.counter)
        text = f"{self.rng.choice(self.texts)} (load note {n}, {time.time_ns()})"
        return {"scope_type": "organization", "memory_type": "fact", "current_content": text}

    def get(self) -> str:
        return self.rng.choice(self.ids)


def parse_mix(text: str) -> tuple[tuple[str, float], ...]:
    """``search=70,write=20,get=10`` as shares that add up to 1 (any positive weights; an operation
    left out is not sent). Raises ValueError saying what to fix."""
    weights: dict[str, float] = {}
    for part in text.split(","):
        name, _, value = part.strip().partition("=")
        if name not in OPERATIONS:
            raise ValueError(f"unknown operation {name!r} in --mix: use {', '.join(OPERATIONS)}, as search=70,write=20")
        if name in weights:
            raise ValueError(f"{name} is given twice in --mix")
        try:
            weight = float(value)
        except ValueError:
            raise ValueError(f"{name}'s weight in --mix must be a number, as {name}=20, not {value!r}") from None
        if not math.isfinite(weight) or weight < 0:
            raise ValueError(f"{name}'s weight in --mix must be 0 or more, not {value}")
        weights[name] = weight
    total = sum(weights.values())
    if total <= 0:
        raise ValueError("--mix needs at least one operation with a weight above 0")
    return tuple((name, weights[name] / total) for name in OPERATIONS if weights.get(name))


class _Http:
    """One keep-alive HTTP/1.1 connection on loopback, requests written and responses read by hand.

    httpx cost the generator 1.5 ms of CPU a request, on the cores the server needs (15% of the
    machine at 100 requests/s); this costs a fraction of that. Responses are read by their
    Content-Length, or chunk by chunk.
    """

    def __init__(self, base: str, token: str) -> None:
        parts = urlsplit(base)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.head = f"Host: {self.host}:{self.port}\r\nAuthorization: Bearer {token}\r\n"
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.opened = 0

    async def request(
        self, method: str, path: str, body: Any = None, accept: str = "application/json", extra: str = ""
    ) -> tuple[int, bytes]:
        if self.reader is None or self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            self.opened += 1
        reader, writer = self.reader, self.writer
        data = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\n{self.head}{extra}Accept: {accept}\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        writer.write(head.encode() + b"\r\n" + data)
        try:
            status, headers = _head(await reader.readuntil(b"\r\n\r\n"))
            if headers.get("transfer-encoding") == "chunked":
                payload = await _chunks(reader)
            else:
                payload = await reader.readexactly(int(headers.get("content-length", "0")))
        except (asyncio.IncompleteReadError, ConnectionError):
            await self.close()
            raise
        if headers.get("connection") == "close":
            await self.close()
        return status, payload

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None


def _head(raw: bytes) -> tuple[int, dict[str, str]]:
    lines = raw.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip().lower()
    return int(lines[0].split(" ", 2)[1]), headers


async def _chunks(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        chunk = await reader.readexactly(size + 2)  # and its CRLF
        if size == 0:
            return b"".join(parts)
        parts.append(chunk[:-2])


async def _rest(http: _Http, operation: str, work: Workload) -> bool:
    if operation == "search":
        status, _ = await http.request("POST", "/api/v1/memories/search/", work.search())
    elif operation == "write":
        status, _ = await http.request("POST", "/api/v1/memories/", work.write())
    else:
        status, _ = await http.request("GET", f"/api/v1/memories/{work.get()}/")
    return status in (200, 201)


async def _mcp(http: _Http, operation: str, work: Workload, request_id: int, revision: str) -> bool:
    if operation == "search":
        name, arguments = "memory-search", work.search()
    elif operation == "write":
        name, arguments = "memory-write", work.write()
    else:
        name, arguments = "memory-get", {"id": work.get()}
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    extra = ""
    if revision != MCP_REVISIONS[0]:
        params["_meta"] = MODERN_ENVELOPE
        extra = f"MCP-Protocol-Version: {revision}\r\nMcp-Method: tools/call\r\nMcp-Name: {name}\r\n"
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    status, payload = await http.request("POST", "/mcp", message, accept=MCP_ACCEPT, extra=extra)
    if status != 200:
        return False
    body = json.loads(payload)
    return "result" in body and not body["result"].get("isError")


@dataclass
class Target:
    base: str
    token: str
    work: Workload
    mcp_revision: str = MCP_REVISIONS[0]


@dataclass
class Stop:
    """When clients stop: at ``deadline``, or once ``budget`` requests went out; ``only`` one type."""

    deadline: float
    budget: int
    only: str | None = None


async def _client(target: Target, transport: str, tally: Tally, stop: Stop) -> None:
    http = _Http(target.base, target.token)
    work = target.work
    request_id = 0
    try:
        while time.monotonic() < stop.deadline and stop.budget > 0:
            stop.budget -= 1
            operation = stop.only or work.pick()
            request_id += 1
            started = time.perf_counter()
            try:
                if transport == "rest":
                    ok = await asyncio.wait_for(_rest(http, operation, work), 60)
                else:
                    ok = await asyncio.wait_for(_mcp(http, operation, work, request_id, target.mcp_revision), 60)
            except Exception as error:  # every failure is counted and shown, not raised
                ok = False
                await http.close()
                if len(tally.examples) < 5:
                    tally.examples.append(f"{transport} {operation}: {error!r}")
            elapsed = time.perf_counter() - started
            if ok:
                tally.times[(operation, transport)].append(elapsed)
            else:
                tally.errors[(operation, transport)] += 1
    finally:
        tally.connections += http.opened
        await http.close()


def _web_connections(server_pid: int) -> list[int]:
    """Connections each web process of the server holds (memory_platform.balance), most first."""
    from memory_platform.balance import _children, connections_per_process

    for child in _children(server_pid):
        counts = connections_per_process(child)
        if counts:
            return sorted(counts.values(), reverse=True)
    return []


def _server_cpu_seconds(pid: int) -> float:
    """CPU time of a process and every process under it (web workers, the Celery worker)."""
    total = 0.0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / CLK_TCK
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        pending += [int(child) for child in children]
    return total


def _postgres_cpu_seconds() -> float:
    """CPU time of the database server's processes (all of them: a loaded machine's share is ours)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if b"postgres" not in (entry / "comm").read_bytes():
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / CLK_TCK
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


async def _phase(target: Target, clients: int, stop: Stop, server_pid: int | None = None) -> tuple[Tally, float]:
    tally = Tally()
    started = time.perf_counter()

    async def look() -> None:
        await asyncio.sleep(0.75 * (stop.deadline - time.monotonic()))
        if server_pid:
            tally.web_connections = _web_connections(server_pid)

    sample = asyncio.create_task(look())
    await asyncio.gather(*(_client(target, "rest" if n % 2 == 0 else "mcp", tally, stop) for n in range(clients)))
    sample.cancel()
    return tally, time.perf_counter() - started


def _run(
    target: Target, clients: int, seconds: float, budget: int, *, only: str | None = None, server_pid: int | None = None
) -> tuple[Tally, float]:
    stop = Stop(deadline=time.monotonic() + seconds, budget=budget, only=only)
    return asyncio.run(_phase(target, clients, stop, server_pid))


def _report(tally: Tally, wall: float) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    everything: list[float] = []
    for (operation, transport), times in sorted(tally.times.items()):
        ms = [t * 1000 for t in times]
        everything += ms
        rows[f"{operation} {transport}"] = {
            "n": len(ms),
            "errors": tally.errors.get((operation, transport), 0),
            "p50": round(percentile(ms, 0.5), 1),
            "p95": round(percentile(ms, 0.95), 1),
            "p99": round(percentile(ms, 0.99), 1),
        }
    return {
        "requests": tally.count,
        "errors": sum(tally.errors.values()),
        "seconds": round(wall, 1),
        "requests_per_s": round(tally.count / wall, 1),
        "p50": round(percentile(everything, 0.5), 1),
        "p95": round(percentile(everything, 0.95), 1),
        "p99": round(percentile(everything, 0.99), 1),
        "by_operation": rows,
        "error_examples": tally.examples,
        "connections_opened": tally.connections,
        "connections_per_web_process": tally.web_connections,
    }


def _settle(server_pid: int, *, idle: float = 0.1, seconds: float = 300) -> float:
    """Wait until the server and the database use less than ``idle`` of a core over two seconds in a
    row (a worker that just started sweeps every organization once), up to ``seconds``; the wait."""
    started = time.monotonic()
    quiet = 0
    while time.monotonic() - started < seconds and quiet < 2:
        before = _server_cpu_seconds(server_pid) + _postgres_cpu_seconds()
        time.sleep(1)
        quiet = quiet + 1 if _server_cpu_seconds(server_pid) + _postgres_cpu_seconds() - before < idle else 0
    return time.monotonic() - started


def measure(target: Target, server_pid: int | None, args: argparse.Namespace) -> dict[str, Any]:
    settled = _settle(server_pid) if server_pid else 0.0
    # Warm up: the model, the pools, the caches.
    _run(target, args.clients, 5, 50 * args.clients)
    own_before = resource.getrusage(resource.RUSAGE_SELF)
    cpu_before = _server_cpu_seconds(server_pid) if server_pid else None
    db_before = _postgres_cpu_seconds()
    tally, wall = _run(target, args.clients, args.seconds, args.max_requests, server_pid=server_pid)
    own_after = resource.getrusage(resource.RUSAGE_SELF)
    result: dict[str, Any] = {"mixed": _report(tally, wall), "settled_seconds": round(settled, 1)}
    generator = (own_after.ru_utime + own_after.ru_stime) - (own_before.ru_utime + own_before.ru_stime)
    result["mixed"]["load_generator_cpu_share"] = round(generator / wall, 2)
    if cpu_before is not None and server_pid:
        server = _server_cpu_seconds(server_pid) - cpu_before
        result["mixed"]["server_cpu_ms_per_request"] = round(1000 * server / max(tally.count, 1), 2)
    result["mixed"]["postgres_cpu_ms_per_request"] = round(
        1000 * (_postgres_cpu_seconds() - db_before) / max(tally.count, 1), 2
    )
    # CPU per request type: one short phase each, all clients sending that type only.
    if server_pid:
        cpu: dict[str, Any] = {}
        for operation, _ in target.work.mix:
            before, db = _server_cpu_seconds(server_pid), _postgres_cpu_seconds()
            tally, wall = _run(target, args.clients, args.cpu_seconds, 10_000, only=operation)
            count = max(tally.count, 1)
            cpu[operation] = {
                "requests": tally.count,
                "requests_per_s": round(tally.count / wall, 1),
                "server_cpu_ms": round(1000 * (_server_cpu_seconds(server_pid) - before) / count, 2),
                "postgres_cpu_ms": round(1000 * (_postgres_cpu_seconds() - db) / count, 2),
            }
        result["cpu_per_request"] = cpu
    return result


# --- a server of our own -------------------------------------------------------------------------


def _seed(memories: int, mix: tuple[tuple[str, float], ...] = MIX) -> tuple[str, Workload]:
    """One organization with ``memories`` synthetic memories (unless a kept database holds them);
    an agent token; what clients send."""
    from django.db import connection

    from bench.ingest import batch_ingest, build_corpus, tenant_queries
    from memories.models import Memory
    from organizations.models import Organization
    from organizations.principal import Principal
    from organizations.tokens import token_create

    tenants = build_corpus(memories)
    large = max(tenants, key=lambda tenant: tenant.rows)
    if not Organization.objects.filter(slug=large.slug).exists():
        batch_ingest(tenants, batch_size=64, progress=False)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE memories_memory")
    organization = Organization.objects.get(slug=large.slug)
    token = token_create(principal=Principal.for_operator(organization, "bench"), role="agent", name="load").raw
    ids = [str(pk) for pk in Memory.objects.filter(organization=organization).values_list("pk", flat=True)[:2000]]
    texts = [memory.text for memory in large.memories[:500]]
    work = Workload(tenant_queries(large, 500), texts, ids, seed=11, mix=mix)
    return token, work


def _serve(port: int, url: str, args: argparse.Namespace, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": url,
        # Measured without the per-token rate limit (a real deployment keeps one).
        "API_THROTTLE_RATE": "",
        "CELERY_BROKER_DIR": str(log.parent / "broker"),
    }
    command = [sys.executable, "manage.py", "serve", "--no-demo", "--port", str(port)]
    if args.workers:
        command += ["--workers", str(args.workers)]
    with log.open("wb") as out:
        return subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)


def _wait_ready(base: str, server: subprocess.Popen[bytes], log: Path) -> None:
    for _ in range(240):
        if server.poll() is not None:
            raise SystemExit(f"the server exited ({server.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2):  # noqa: S310 - loopback
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the server did not answer /healthz:\n{log.read_text()[-3000:]}")


RUN_DATABASE = "bench_load_run"


def _run_database(*, drop_only: bool = False) -> str:
    """A copy of the seeded database for one run (its URL): every run starts from the same rows,
    however many an earlier run wrote (writes grow the large tenant by thousands a minute)."""
    import psycopg
    from django.db import connection

    seeded, url = connection.settings_dict["NAME"], database_url()
    close_pool = getattr(connection, "close_pool", None)
    connection.close()
    if close_pool is not None:
        close_pool()
    with psycopg.connect(url.replace(f"/{seeded}?", "/postgres?"), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{RUN_DATABASE}" WITH (FORCE)')
        if not drop_only:
            admin.execute(f'CREATE DATABASE "{RUN_DATABASE}" TEMPLATE "{seeded}"')
    return url.replace(f"/{seeded}?", f"/{RUN_DATABASE}?")


def _with_own_server(args: argparse.Namespace) -> dict[str, Any]:
    token, work = _seed(args.memories, args.mix)
    url = _run_database()
    port = free_port()
    log = Path(args.log_dir) / "load-server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    server = _serve(port, url, args, log)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base, server, log)
        return measure(Target(base, token, work, args.mcp_revision), server.pid, args)
    finally:
        server.terminate()
        server.wait(timeout=60)
        _run_database(drop_only=True)


def _against(args: argparse.Namespace) -> dict[str, Any]:
    import httpx

    host = urlsplit(args.url).hostname
    if host not in LOOPBACK:
        raise SystemExit(f"--url must be on loopback ({', '.join(sorted(LOOPBACK))}), not {host}")
    headers = {"Authorization": f"Bearer {args.token}"}
    with httpx.Client(base_url=args.url, headers=headers, timeout=60) as client:
        listed = client.get("/api/v1/memories/", params={"limit": 200}).json()["results"]
    if not listed:
        raise SystemExit("the token's organization has no memories to search and get; write some first")
    texts = [memory["current_content"] for memory in listed]
    queries = [" ".join(text.split()[:6]) for text in texts]
    work = Workload(queries, texts, [memory["id"] for memory in listed], seed=11, mix=args.mix)
    return measure(Target(args.url.rstrip("/"), args.token, work, args.mcp_revision), args.server_pid, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="A running server (loopback only); without it, one is started here.")
    parser.add_argument("--token", help="An agent token of the running server's organization (with --url).")
    parser.add_argument("--server-pid", type=int, default=None, help="With --url: the server's pid, for CPU figures.")
    parser.add_argument("--memories", type=int, default=10000, help="Memories seeded (own server).")
    parser.add_argument("--workers", type=int, default=0, help="Web processes of the own server (0: serve's default).")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument(
        "--mix",
        default="search=70,write=20,get=10",
        help="What the clients send, as weights (search=70,write=20,get=10); an operation left out is not sent.",
    )
    parser.add_argument(
        "--mcp-revision", choices=MCP_REVISIONS, default=MCP_REVISIONS[0], help="The MCP revision clients speak."
    )
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--max-requests", type=int, default=100_000, help="Stop the mixed phase after this many.")
    parser.add_argument("--cpu-seconds", type=float, default=10, help="Length of each CPU-per-type phase.")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="Keep the seeded database (bench_load) and reuse it next time; each run works on a copy of it.",
    )
    parser.add_argument("--log-dir", default=str(REPO / "var" / "bench"))
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    if args.url and not args.token:
        parser.error("--url needs --token")
    try:
        args.mix = parse_mix(args.mix)
    except ValueError as error:
        parser.error(str(error))
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per request

    if args.url:
        result = _against(args)
    else:
        with bench_database("load", keep=args.keep):
            result = _with_own_server(args)
    result = {"benchmark": "load", "clients": args.clients, "memories": args.memories, "mix": dict(args.mix),
              "mcp_revision": args.mcp_revision, **result, "load_average": os.getloadavg()}  # fmt: skip
    mixed = result["mixed"]
    print(
        f"\n{mixed['requests']} requests in {mixed['seconds']} s: {mixed['requests_per_s']} requests/s, "
        f"p50 {mixed['p50']} ms, p95 {mixed['p95']} ms, p99 {mixed['p99']} ms, {mixed['errors']} errors; "
        f"the generator used {mixed['load_generator_cpu_share']:.0%} of a core"
    )
    if mixed["connections_per_web_process"]:
        print(
            f"{mixed['connections_opened']} connections opened by {args.clients} clients; connections per web "
            f"process three quarters in: {mixed['connections_per_web_process']}"
        )
    rows = [
        [name, row["n"], row["errors"], row["p50"], row["p95"], row["p99"]]
        for name, row in mixed["by_operation"].items()
    ]
    print_table("By operation", ["operation", "n", "errors", "p50", "p95", "p99"], rows)
    if "cpu_per_request" in result:
        print_table(
            "CPU per request", ["type", "requests/s", "server ms", "postgres ms"],
            [[name, row["requests_per_s"], row["server_cpu_ms"], row["postgres_cpu_ms"]]
             for name, row in result["cpu_per_request"].items()],
        )  # fmt: skip
    for example in mixed["error_examples"]:
        print("error:", example)
    if args.json_out:
        write_json(args.json_out, result)
    print(json.dumps({k: mixed[k] for k in ("requests_per_s", "p50", "p95", "errors")}))


if __name__ == "__main__":
    main()
