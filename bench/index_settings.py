"""An organization's HNSW graph: what its build settings and its precision cost and buy.

For each measured tenant (by rank of size) and each graph asked for (``--graphs``: m, ef_construction
and precision), a copy of the tenant's rows (id and vector) with that one graph:

  full  over ``embedding`` (vector_cosine_ops), as the platform builds it (memories.search.tenant_indexes);
  half  over ``embedding::halfvec(384)`` (halfvec_cosine_ops): half the bytes a node; its candidates
        are ordered again by their full-precision distance, so the scores an agent sees do not change.

Measured on every graph, alternated query by query and batch by batch so that all of them see the
same machine: build time and size; the vector retriever's query (ORDER BY distance LIMIT 50,
iterative scan) at each ``--ef-search``, p50/p95 in ms and recall@10 against an exact scan; and what
one more row costs to insert, in batches of new vectors near the tenant's own (writes are where a
graph's settings cost most: each new node is linked to up to 2m others, whose own links are chosen
again).

Run against a database bench/scale.py kept (its memories are read; nothing of them is changed):

    DATABASE_URL=postgresql://USER@/bench_scale_1000000?host=SOCKET_DIR \\
        python bench/index_settings.py --json bench/results/$(date +%F)/index-settings.json
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, summary_ms, write_json

K = 10
POOL = 50
DIMENSIONS = 384


@dataclass(frozen=True)
class Graph:
    m: int
    ef_construction: int
    precision: str  # "full" or "half"

    @property
    def label(self) -> str:
        return f"m{self.m}-ef{self.ef_construction}-{self.precision}"

    @property
    def table(self) -> str:
        return f"bench_graph_{self.label.replace('-', '_')}"

    @property
    def index(self) -> str:
        target = (
            "embedding vector_cosine_ops"
            if self.precision == "full"
            else f"(embedding::halfvec({DIMENSIONS})) halfvec_cosine_ops"
        )
        return f"USING hnsw ({target}) WITH (m = {self.m}, ef_construction = {self.ef_construction})"

    @property
    def ordering(self) -> str:
        if self.precision == "full":
            return "embedding <=> %(q)s::vector"
        return f"embedding::halfvec({DIMENSIONS}) <=> %(q)s::halfvec({DIMENSIONS})"


def _graph(text: str) -> Graph:
    m, ef, precision = text.split(",")
    if precision not in ("full", "half"):
        raise argparse.ArgumentTypeError(f"precision is full or half, not {precision!r}")
    return Graph(int(m), int(ef), precision)


def _cursor() -> Any:
    from django.db import connection

    return connection.cursor()


def tenants_by_size() -> list[tuple[int, int]]:
    with _cursor() as cursor:
        cursor.execute(
            "SELECT organization_id, count(*) FROM memories_memory WHERE deleted_at IS NULL "
            "AND embedding IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1"
        )
        return [(int(org), int(rows)) for org, rows in cursor.fetchall()]


def build(graph: Graph, organization_id: int) -> dict[str, Any]:
    with _cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {graph.table}")
        cursor.execute(
            f"CREATE TABLE {graph.table} AS SELECT id, embedding FROM memories_memory "  # noqa: S608 - our names
            "WHERE organization_id = %s AND deleted_at IS NULL AND embedding IS NOT NULL",
            [organization_id],
        )
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute("SET max_parallel_maintenance_workers = %s", [max((os.cpu_count() or 2) - 1, 0)])
        started = time.perf_counter()
        cursor.execute(f"CREATE INDEX {graph.table}_hnsw ON {graph.table} {graph.index}")
        seconds = time.perf_counter() - started
        cursor.execute(f"ANALYZE {graph.table}")
        cursor.execute("SELECT pg_relation_size(%s)", [f"{graph.table}_hnsw"])
        size = int(cursor.fetchone()[0])
    return {"build_seconds": round(seconds, 1), "index_mb": round(size / 2**20, 1)}


def tenant_vectors(organization_id: int, count: int, seed: int) -> list[Any]:
    import numpy as np

    with _cursor() as cursor:
        cursor.execute(
            "SELECT embedding::text FROM memories_memory WHERE organization_id = %s AND embedding IS NOT NULL "
            "ORDER BY md5(id::text || %s) LIMIT %s",
            [organization_id, str(seed), count],
        )
        return [np.array([float(x) for x in text.strip("[]").split(",")]) for (text,) in cursor.fetchall()]


def nearby(rows: list[Any], count: int, rng: random.Random, spread: float) -> list[str]:
    """Vectors near the tenant's own: a memory's plus ``spread`` x the difference of two others."""
    import numpy as np

    out = []
    for i in range(count):
        a, b, c = rows[i % len(rows)], rng.choice(rows), rng.choice(rows)
        v = a + spread * (b - c)
        v /= np.linalg.norm(v)
        out.append("[" + ",".join(f"{x:.6f}" for x in v) + "]")
    return out


def search(graph: Graph, vector: str, ef_search: int, *, exact: bool = False) -> tuple[list[Any], float]:
    ordering = "(embedding <=> %(q)s::vector) + 0" if exact else graph.ordering
    # The candidates in the graph's order, then by their full-precision distance.
    sql = (
        f"SELECT id FROM (SELECT id, embedding <=> %(q)s::vector AS d FROM {graph.table} "  # noqa: S608 - our names
        f"ORDER BY {ordering} LIMIT %(k)s) c ORDER BY d, id"
    )
    with _cursor() as cursor:
        cursor.execute("BEGIN")
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(ef_search)])
        started = time.perf_counter()
        cursor.execute(sql, {"q": vector, "k": POOL})
        ids = [row[0] for row in cursor.fetchall()]
        seconds = time.perf_counter() - started
        cursor.execute("COMMIT")
    return ids, seconds


def insert(graph: Graph, vectors: list[str]) -> float:
    with _cursor() as cursor:
        started = time.perf_counter()
        cursor.execute(
            f"INSERT INTO {graph.table} (id, embedding) "  # noqa: S608 - our names
            "SELECT gen_random_uuid(), v::vector FROM unnest(%s::text[]) v",
            [vectors],
        )
        return time.perf_counter() - started


def _turns(graphs: list[Graph], n: int) -> list[Graph]:
    """Every graph once, in an order that turns with ``n``: none is always first."""
    shift = n % len(graphs)
    return graphs[shift:] + graphs[:shift]


def measure_tenant(organization_id: int, rows: int, args: argparse.Namespace) -> dict[str, Any]:
    graphs: list[Graph] = args.graphs
    rng = random.Random(args.seed)
    own = tenant_vectors(organization_id, 3 * args.queries + 500, args.seed)
    queries = nearby(own, args.queries, rng, 0.5)
    out: dict[str, Any] = {"rows": rows, "graphs": {g.label: build(g, organization_id) for g in graphs}}
    exact = {q: search(graphs[0], q, 100, exact=True)[0][:K] for q in queries}
    for ef_search in args.ef_search:
        times: dict[Graph, list[float]] = {g: [] for g in graphs}
        recall: dict[Graph, list[float]] = {g: [] for g in graphs}
        for n, q in enumerate(queries):
            for graph in _turns(graphs, n):
                search(graph, q, ef_search)  # the pages this query reads, warmed
                ids, seconds = search(graph, q, ef_search)
                times[graph].append(seconds)
                recall[graph].append(len(set(ids[:K]) & set(exact[q])) / K)
        for graph in graphs:
            out["graphs"][graph.label][f"search_ef{ef_search}"] = {
                "recall_at_10": round(sum(recall[graph]) / len(queries), 4),
                **summary_ms(times[graph]),
            }
    # New rows near the tenant's (0.3 x a difference: new memories like the ones already there).
    batches = [nearby(own, args.insert_batch, rng, 0.3) for _ in range(args.insert_batches)]
    seconds: dict[Graph, float] = {g: 0.0 for g in graphs}
    for n, batch in enumerate(batches):
        for graph in _turns(graphs, n):
            seconds[graph] += insert(graph, batch)
    for graph in graphs:
        out["graphs"][graph.label]["insert_us_per_row"] = round(seconds[graph] / len(batches) / args.insert_batch * 1e6)
    with _cursor() as cursor:
        for graph in graphs:
            cursor.execute(f"DROP TABLE {graph.table}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 10], help="Tenants measured, by rank of size.")
    parser.add_argument(
        "--graphs",
        type=_graph,
        nargs="+",
        default=[Graph(16, 64, "full"), Graph(16, 64, "half"), Graph(8, 64, "full"), Graph(16, 32, "full")],
        help="m,ef_construction,precision (full or half) of each graph compared; the first is the reference.",
    )
    parser.add_argument("--queries", type=int, default=200, help="Queries per tenant.")
    parser.add_argument("--ef-search", type=int, nargs="+", default=[100], help="SEARCH_HNSW_EF_SEARCH values.")
    parser.add_argument("--insert-batch", type=int, default=500, help="Rows per insert (bench/scale.py's batch).")
    parser.add_argument("--insert-batches", type=int, default=6, help="Insert batches per graph.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")
    import django

    django.setup()
    tenants = tenants_by_size()
    measured = [tenants[rank - 1] for rank in args.ranks if rank <= len(tenants)]
    result: dict[str, Any] = {
        "benchmark": "index_settings",
        "graphs": [g.label for g in args.graphs],
        "tenants": [measure_tenant(org, rows, args) for org, rows in measured],
    }
    for tenant in result["tenants"]:
        print_table(
            f"{tenant['rows']} rows",
            ["graph", "build s", "index MB", *[f"ef{e} {c}" for e in args.ef_search for c in ("p50", "p95", "R@10")],
             "insert us/row"],
            [[label, g["build_seconds"], g["index_mb"],
              *[g[f"search_ef{e}"][c] for e in args.ef_search for c in ("p50", "p95", "recall_at_10")],
              g["insert_us_per_row"]] for label, g in tenant["graphs"].items()],
        )  # fmt: skip
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
