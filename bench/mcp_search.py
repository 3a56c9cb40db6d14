"""memory-search latency through the real MCP Streamable HTTP transport.

Loads the synthetic corpus of bench/ingest.py (N memories over many organizations) into a
throwaway database, starts the ASGI server on a loopback port against it, and times
`memory-search` calls made with the official MCP client (one session, sequential calls),
for the large tenant and the tiny one. Times include HTTP, JSON-RPC, auth and query embedding.

    python bench/mcp_search.py --memories 10000 --queries 100 --json bench/results/mcp_search.json
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import REPO, bench_database, print_table, summary_ms, write_json
from bench.ingest import batch_ingest, build_corpus, tenant_queries


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _database_url() -> str:
    from django.db import connection

    settings = connection.settings_dict
    return f"postgresql://{settings['USER']}@/{settings['NAME']}?host={settings['HOST']}"


async def _time_calls(url: str, token: str, queries: list[str]) -> list[float]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    times = []
    headers = {"Authorization": f"Bearer {token}"}
    async with streamablehttp_client(url, headers=headers) as (read, write, _), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("memory-search", {"query": "warm up", "limit": 10})
        for query in queries:
            started = time.perf_counter()
            result = await session.call_tool("memory-search", {"query": query, "limit": 10})
            times.append(time.perf_counter() - started)
            if result.isError:
                raise SystemExit(f"memory-search failed: {result.content[0].text}")
    return times


def run(args: argparse.Namespace) -> dict[str, Any]:
    from organizations.models import Organization
    from organizations.principal import Principal
    from organizations.services import token_create

    tenants = build_corpus(args.memories)
    batch_ingest(tenants, batch_size=64)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    measured = [t for t in tenants if t.role in ("large", "tiny")]
    tokens = {}
    for tenant in measured:
        organization = Organization.objects.get(slug=tenant.slug)
        tokens[tenant.slug] = token_create(
            principal=Principal.for_operator(organization, "bench"), role="agent", name="bench"
        ).raw
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": _database_url(), "RUN_WORKER": "0"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "memory_platform.asgi:application",
            "--port",
            str(port),
            "--lifespan",
            "off",
            "--log-level",
            "warning",
        ],
        cwd=REPO,
        env=env,
    )
    try:
        for _ in range(120):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                    break
            except OSError:
                time.sleep(0.5)
        url = f"http://127.0.0.1:{port}/mcp"
        by_tenant = {}
        all_times: list[float] = []
        for tenant in measured:
            times = asyncio.run(_time_calls(url, tokens[tenant.slug], tenant_queries(tenant, args.queries)))
            by_tenant[tenant.role] = {"rows": tenant.rows, **summary_ms(times)}
            all_times += times
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {
        "benchmark": "mcp_search",
        "memories": args.memories,
        "transport": "streamable-http",
        "search_ms": {"overall": summary_ms(all_times), "by_tenant": by_tenant},
        "load_average": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10000)
    parser.add_argument("--queries", type=int, default=100, help="Queries per measured tenant.")
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    with bench_database("mcp_search"):
        result = run(args)
    rows = [
        [role, row["rows"], row["p50"], row["p95"], row["n"]] for role, row in result["search_ms"]["by_tenant"].items()
    ]
    overall = result["search_ms"]["overall"]
    rows.append(["overall", args.memories, overall["p50"], overall["p95"], overall["n"]])
    print_table(
        f"memory-search over MCP HTTP ({args.memories} memories, ms)", ["tenant", "rows", "p50", "p95", "n"], rows
    )
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
