"""What reading searches from a replica costs each search: memory_search on a primary with a hot
standby (the embedded binaries, over TCP, write positions in Redis), each query timed on both
paths in turn, in one process.

- ``replica``: as DATABASE_REPLICA_URL runs it: the organization's write position read from the
  cache, one check on the replica (in recovery, replayed that position, lag), then the search there;
- ``primary``: the same search with no replica configured (memory_platform.db.replicas.configured
  answering no), as a platform without DATABASE_REPLICA_URL runs it.

Each query is searched once untimed first (its embedding and the term statistics cached), then on
the two paths, which take turns going first. The corpus is bench/ingest.py's, loaded through
memory_batch_create with the model.

    python bench/replica_overhead.py --memories 5000 --json bench/results/$(date +%F)/replica-overhead.json
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import free_port, print_table, summary_ms, write_json
from bench.ingest import build_corpus, chunks, tenant_queries
from memory_platform import embedded_db

MODES = ("hybrid", "vector", "keyword")
REDIS = "redis://127.0.0.1:6379/11"


def _caught_up(primary: str, replica: str) -> None:
    import psycopg

    with psycopg.connect(primary, autocommit=True) as connection:
        (position,) = connection.execute("SELECT pg_current_wal_lsn()::text").fetchone()
    with psycopg.connect(replica, autocommit=True) as connection:
        while not connection.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [position]).fetchone()[0]:
            time.sleep(0.05)


def run(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    primary = embedded_db.ensure_running(root / "primary", tcp_port=free_port())
    replica = embedded_db.start_replica(primary, root / "replica", tcp_port=free_port())
    primary_url = f"postgresql://postgres@127.0.0.1:{primary.port}/memory_platform"
    replica_url = f"postgresql://postgres@127.0.0.1:{replica.port}/memory_platform"
    os.environ.update(DATABASE_URL=primary_url, DATABASE_REPLICA_URL=replica_url, REDIS_URL=REDIS)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")
    import django

    django.setup()
    import redis
    from django.core.management import call_command

    from bench.search_latency import agent_principal
    from memories.batch import memory_batch_create
    from memories.search import SearchParams, memory_search, search_caches
    from memory_platform.db import replicas
    from organizations.models import Organization
    from organizations.principal import Principal

    redis.Redis.from_url(REDIS).flushdb()
    call_command("migrate", interactive=False, verbosity=0)
    tenant = max(build_corpus(args.memories, args.seed), key=lambda t: t.rows)
    organization = Organization.objects.create(slug=tenant.slug, name=tenant.slug)
    operator = Principal.for_operator(organization, "bench")
    started = time.perf_counter()
    for batch in chunks(tenant.memories, 500):
        memory_batch_create(principal=operator, entries=[m.entry() for m in batch])
    loaded = time.perf_counter() - started
    _caught_up(primary_url, replica_url)

    principal = agent_principal(tenant.slug)
    queries = tenant_queries(tenant, args.queries, args.seed)
    configured = replicas.configured
    times: dict[str, dict[str, list[float]]] = {mode: {"replica": [], "primary": []} for mode in MODES}
    try:
        for i, query in enumerate(queries):
            for mode in MODES:
                params = SearchParams.build(query=query, mode=mode, limit=10)
                memory_search(principal, params)  # warm: the query's embedding, the term statistics
                paths = ("replica", "primary") if i % 2 else ("primary", "replica")
                for path in paths:
                    replicas.configured = (lambda: True) if path == "replica" else (lambda: False)  # type: ignore[assignment]
                    began = time.perf_counter()
                    memory_search(principal, params)
                    times[mode][path].append(time.perf_counter() - began)
    finally:
        replicas.configured = configured  # type: ignore[assignment]
        search_caches.reset()
    return {
        "benchmark": "replica_overhead",
        "memories": tenant.rows,
        "queries": len(queries),
        "load_seconds": round(loaded, 1),
        "search_ms": {
            mode: {path: summary_ms(values) for path, values in by_path.items()} for mode, by_path in times.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=5000, help="The corpus; its largest tenant is searched.")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="replica-overhead-"))
    try:
        result = run(args, root)
    finally:
        embedded_db.stop(root / "replica")
        embedded_db.stop(root / "primary")
    rows = [
        [mode, *(result["search_ms"][mode][path][key] for path in ("primary", "replica") for key in ("p50", "p95"))]
        for mode in MODES
    ]
    print_table(
        f"memory_search, {result['memories']} memories, {result['queries']} queries (ms)",
        ["mode", "primary p50", "primary p95", "replica p50", "replica p95"],
        rows,
    )
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
