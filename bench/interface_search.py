"""Search latency through the real interfaces: MCP Streamable HTTP and the REST API.

Loads the synthetic corpus of bench/ingest.py (N memories over many organizations) into a
throwaway database, starts the web server on a loopback port against it, and times, for the
large tenant and the tiny one, sequential searches (limit 10) through each interface:
`memory-search` with the official MCP client (one session) and POST /api/v1/memories/search/
with one keep-alive HTTP client. Times include HTTP, JSON-RPC or DRF, auth and query embedding.

    python bench/interface_search.py --memories 10000 --queries 100 \\
        --json bench/results/$(date +%F)/interface_search.json
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import REPO, bench_database, database_url, free_port, print_table, summary_ms, write_json
from bench.ingest import batch_ingest, build_corpus, tenant_queries
from memory_platform import web


async def _time_mcp(url: str, token: str, queries: list[str], mode: str = "auto") -> list[float]:
    """``mode``: the client's, "auto" for 2026-07-28 (per-request envelope), "legacy" for 2025-11-25."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    times = []
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60)) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, cache=None) as session,
    ):
        await session.call_tool("memory-search", {"query": "warm up", "limit": 10})
        for query in queries:
            started = time.perf_counter()
            result = await session.call_tool("memory-search", {"query": query, "limit": 10})
            times.append(time.perf_counter() - started)
            if result.is_error:
                raise SystemExit(f"memory-search failed: {result.content[0].text}")
    return times


def _time_rest(base: str, token: str, queries: list[str]) -> list[float]:
    import httpx

    times = []
    url = f"{base}/api/v1/memories/search/"
    with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        client.post(url, json={"query": "warm up", "limit": 10}).raise_for_status()
        for query in queries:
            started = time.perf_counter()
            response = client.post(url, json={"query": query, "limit": 10})
            times.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise SystemExit(f"REST search failed: {response.status_code} {response.text}")
    return times


def run(args: argparse.Namespace) -> dict[str, Any]:
    from organizations.models import Organization
    from organizations.principal import Principal
    from organizations.tokens import token_create

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
    port = free_port()
    # Fuzzing-free measurement: the per-token rate limit must not throttle the bench. Every interface
    # asks the same questions, so the server's cache of query vectors is off: otherwise the second
    # interface's questions would not be embedded at all.
    env = {**os.environ, "DATABASE_URL": database_url(), "RUN_WORKER": "0", "API_THROTTLE_RATE": "",
           "EMBEDDING_QUERY_CACHE_SIZE": "0"}  # fmt: skip
    server = subprocess.Popen(
        web.command("127.0.0.1", port),
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
        base = f"http://127.0.0.1:{port}"
        results: dict[str, Any] = {}
        for interface in args.interfaces:
            by_tenant = {}
            all_times: list[float] = []
            for tenant in measured:
                queries = tenant_queries(tenant, args.queries)
                if interface == "mcp":
                    times = asyncio.run(_time_mcp(f"{base}/mcp", tokens[tenant.slug], queries))
                else:
                    times = _time_rest(base, tokens[tenant.slug], queries)
                by_tenant[tenant.role] = {"rows": tenant.rows, **summary_ms(times)}
                all_times += times
            results[interface] = {"overall": summary_ms(all_times), "by_tenant": by_tenant}
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {
        "benchmark": "interface_search",
        "memories": args.memories,
        # memories/access.py: where the access tally is written (the server reads the same variable)
        "access_flush_in_background": os.environ.get("MEMORY_ACCESS_FLUSH_IN_BACKGROUND", "true"),
        "search_ms": results,
        "load_average": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10000)
    parser.add_argument("--queries", type=int, default=100, help="Queries per measured tenant.")
    parser.add_argument(
        "--interfaces", nargs="+", choices=["mcp", "rest"], default=["mcp", "rest"], help="Which to measure."
    )
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    with bench_database("interface_search"):
        result = run(args)
    rows = []
    for interface, measured in result["search_ms"].items():
        for role, row in measured["by_tenant"].items():
            rows.append([interface, role, row["rows"], row["p50"], row["p95"], row["p99"], row["max"], row["n"]])
        overall = measured["overall"]
        summary = [overall[key] for key in ("p50", "p95", "p99", "max", "n")]
        rows.append([interface, "overall", args.memories, *summary])
    print_table(
        f"search over HTTP ({args.memories} memories, ms)",
        ["interface", "tenant", "rows", "p50", "p95", "p99", "max", "n"],
        rows,
    )
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
