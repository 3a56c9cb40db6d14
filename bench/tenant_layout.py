"""Where each organization's vectors are indexed: three layouts compared on the same rows.

  shared       one HNSW graph over every organization (the layout until memories migration 0011),
               walked with pgvector's iterative scan until enough of the organization's rows pass;
  own          a partial HNSW index per organization past --threshold rows (what the platform does,
               memories.search.tenant_indexes), smaller organizations sorted exactly;
  partitioned  PostgreSQL declarative partitioning by organization: a list partition per organization
               past --threshold, the rest in a default partition split into --hash hash partitions,
               an HNSW index on each partition (the partitioned index).

Each layout is built on a copy of the memories' ids, organizations and vectors (so the database's own
table is not touched), and searched with the vector retriever's query shape (organization in the
predicate, ORDER BY distance LIMIT 50, iterative scan, ef_search 100) by query vectors near the
tenants' own (a memory's vector moved along the difference of two others). Reported per layout and
tenant size: build time and size, query p50/p95 (ms, in PostgreSQL, sequential) and recall@10
against an exact scan; and what each partial index costs every other query: planning time of a
primary-key lookup on a table with 0 to --max-indexes partial indexes.

Run against a database bench/scale.py kept (its memories table is read; nothing of it is changed):

    DATABASE_URL=postgresql://USER@/bench_scale_300000?host=SOCKET_DIR \\
        python bench/tenant_layout.py --json bench/results/$(date +%F)/tenant-layout.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, summary_ms, write_json

ROWS = "bench_layout_rows"
PART = "bench_layout_part"
K = 10
POOL = 50


def _cursor() -> Any:
    from django.db import connection

    return connection.cursor()


def copy_rows() -> list[tuple[int, int]]:
    """The copy every layout is built on; (organization, rows) largest first."""
    with _cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {ROWS}")
        cursor.execute(
            f"CREATE TABLE {ROWS} AS SELECT id, organization_id, embedding FROM memories_memory "  # noqa: S608 - names
            "WHERE deleted_at IS NULL AND embedding IS NOT NULL"
        )
        cursor.execute(f"CREATE INDEX ON {ROWS} (organization_id)")
        cursor.execute(f"ANALYZE {ROWS}")
        cursor.execute(f"SELECT organization_id, count(*) FROM {ROWS} GROUP BY 1 ORDER BY 2 DESC, 1")  # noqa: S608
        return [(int(org), int(count)) for org, count in cursor.fetchall()]


def _timed(statements: list[str]) -> float:
    started = time.perf_counter()
    with _cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute("SET max_parallel_maintenance_workers = %s", [max((os.cpu_count() or 2) - 1, 0)])
        for statement in statements:
            cursor.execute(statement)
    return round(time.perf_counter() - started, 1)


def _size(pattern: str) -> float:
    with _cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(pg_relation_size(oid)), 0) FROM pg_class WHERE relkind = 'i' AND relname ~ %s",
            [pattern],
        )
        return round(int(cursor.fetchone()[0]) / 2**20, 1)


HNSW = "USING hnsw (embedding vector_cosine_ops) WITH (m = {m}, ef_construction = {ef})"


def build_shared(m: int, ef: int) -> dict[str, Any]:
    seconds = _timed(["DROP INDEX IF EXISTS bl_shared", f"CREATE INDEX bl_shared ON {ROWS} {HNSW.format(m=m, ef=ef)}"])
    return {"build_seconds": seconds, "index_mb": _size("^bl_shared$")}


def drop_shared() -> None:
    with _cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS bl_shared")


def build_own(due: list[int], m: int, ef: int) -> dict[str, Any]:
    statements = [
        f"CREATE INDEX bl_own_{org} ON {ROWS} {HNSW.format(m=m, ef=ef)} WHERE organization_id = {org}" for org in due
    ]
    seconds = _timed(statements)
    return {"build_seconds": seconds, "index_mb": _size("^bl_own_[0-9]+$"), "indexes": len(due)}


def drop_own(due: list[int]) -> None:
    with _cursor() as cursor:
        for org in due:
            cursor.execute(f"DROP INDEX IF EXISTS bl_own_{org}")


def build_partitioned(due: list[int], hashes: int, m: int, ef: int) -> dict[str, Any]:
    statements = [
        f"DROP TABLE IF EXISTS {PART}",
        f"CREATE TABLE {PART} (id uuid, organization_id bigint, embedding vector(384))"
        " PARTITION BY LIST (organization_id)",
    ]
    statements += [f"CREATE TABLE {PART}_o{org} PARTITION OF {PART} FOR VALUES IN ({org})" for org in due]
    statements.append(f"CREATE TABLE {PART}_rest PARTITION OF {PART} DEFAULT PARTITION BY HASH (organization_id)")
    statements += [
        f"CREATE TABLE {PART}_rest_{i} PARTITION OF {PART}_rest FOR VALUES WITH (MODULUS {hashes}, REMAINDER {i})"
        for i in range(hashes)
    ]
    statements.append(f"INSERT INTO {PART} SELECT id, organization_id, embedding FROM {ROWS}")  # noqa: S608
    load = _timed(statements)
    seconds = _timed([
        f"CREATE INDEX ON {PART} (organization_id)",
        f"CREATE INDEX ON {PART} {HNSW.format(m=m, ef=ef)}",
        f"ANALYZE {PART}",
    ])  # fmt: skip
    return {"load_seconds": load, "build_seconds": seconds, "index_mb": _size(f"^{PART}_.*embedding")}


def query_vectors(organization_id: int, count: int, seed: int) -> list[str]:
    """Vectors near the tenant's own: a memory's plus 0.5 x the difference of two others."""
    import numpy as np

    with _cursor() as cursor:
        cursor.execute(
            f"SELECT embedding::text FROM {ROWS} WHERE organization_id = %s ORDER BY md5(id::text || %s) LIMIT %s",  # noqa: S608
            [organization_id, str(seed), count * 3],
        )
        rows = [np.array([float(x) for x in text.strip("[]").split(",")]) for (text,) in cursor.fetchall()]
    rng = random.Random(seed)
    out = []
    for i in range(count):
        a, b, c = rows[i % len(rows)], rng.choice(rows), rng.choice(rows)
        v = a + 0.5 * (b - c)
        v /= np.linalg.norm(v)
        out.append("[" + ",".join(f"{x:.6f}" for x in v) + "]")
    return out


def _search(
    table: str, organization_id: int, vector: str, *, exact: bool = False, ef_search: int = 100
) -> tuple[list[Any], float]:
    ordering = "(embedding <=> %s::vector) + 0" if exact else "embedding <=> %s::vector"
    sql = f"SELECT id FROM {table} WHERE organization_id = %s ORDER BY {ordering} LIMIT %s"  # noqa: S608
    with _cursor() as cursor:
        cursor.execute("BEGIN")
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(ef_search)])
        started = time.perf_counter()
        cursor.execute(sql, [organization_id, vector, POOL])
        rows = [row[0] for row in cursor.fetchall()]
        seconds = time.perf_counter() - started
        cursor.execute("COMMIT")
    return rows, seconds


def measure(
    table: str,
    tenants: list[tuple[int, int]],
    queries: dict[int, list[str]],
    exact: dict[Any, list[Any]],
    ef_search: int = 100,
) -> dict[str, Any]:
    out = {}
    for organization_id, rows in tenants:
        times, found = [], []
        for vector in queries[organization_id]:
            _search(table, organization_id, vector, ef_search=ef_search)  # warm the pages this query reads
            got, seconds = _search(table, organization_id, vector, ef_search=ef_search)
            times.append(seconds)
            truth = exact[(organization_id, vector)]
            found.append(len(set(got[:K]) & set(truth)) / len(truth))
        out[str(rows)] = {"recall_at_10": round(sum(found) / len(found), 4), **summary_ms(times)}
    return out


def planning_cost(max_indexes: int) -> list[dict[str, Any]]:
    """Planning time of a primary-key lookup on a table with N partial indexes on it."""
    with _cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_layout_plan")
        cursor.execute(
            "CREATE TABLE bench_layout_plan (id uuid PRIMARY KEY, organization_id bigint, embedding vector(384), "
            "search_vector tsvector)"
        )
    results, built = [], 0
    for target in (0, 10, 50, 100, 250, 500, max_indexes):
        if target > max_indexes or target < built:
            continue
        with _cursor() as cursor:
            for org in range(built, target):
                cursor.execute(
                    f"CREATE INDEX bl_plan_h{org} ON bench_layout_plan USING hnsw (embedding vector_cosine_ops)"
                    f" WHERE organization_id = {org}"
                )
                cursor.execute(
                    f"CREATE INDEX bl_plan_t{org} ON bench_layout_plan USING gin (search_vector)"
                    f" WHERE organization_id = {org}"
                )
            built = target
            times = []
            for _ in range(200):
                cursor.execute(
                    "EXPLAIN (SUMMARY, FORMAT JSON) SELECT * FROM bench_layout_plan WHERE id = gen_random_uuid()"
                )
                plan = cursor.fetchone()[0]
                plan = (plan if isinstance(plan, list) else json.loads(plan))[0]
                times.append(plan["Planning Time"] / 1000)
        times.sort()
        results.append({"partial_indexes": 2 * target, "p50_us": round(times[len(times) // 2] * 1e6, 1),
                        "p95_us": round(times[int(len(times) * 0.95)] * 1e6, 1)})  # fmt: skip
    with _cursor() as cursor:
        cursor.execute("DROP TABLE bench_layout_plan")
    return results


def run(args: argparse.Namespace) -> dict[str, Any]:
    tenants = copy_rows()
    due = [org for org, rows in tenants if rows > args.threshold]
    # The measured tenants: the largest, a few down the curve, and one under the threshold.
    picks = [tenants[0]]
    for wanted in (tenants[0][1] // 3, tenants[0][1] // 10, args.threshold * 2, args.threshold // 2):
        picks.append(min(tenants, key=lambda t: abs(t[1] - wanted)))
    measured = sorted(set(picks), key=lambda t: -t[1])
    queries = {org: query_vectors(org, args.queries, args.seed) for org, _ in measured}
    exact = {(org, v): _search(ROWS, org, v, exact=True)[0][:K] for org, _ in measured for v in queries[org]}
    print(f"{len(tenants)} organizations, {sum(r for _, r in tenants)} rows; {len(due)} past {args.threshold}")
    result: dict[str, Any] = {"benchmark": "tenant_layout", "rows": sum(r for _, r in tenants),
                              "organizations": len(tenants), "threshold": args.threshold, "own_indexes": len(due),
                              "measured_tenants": [rows for _, rows in measured], "layouts": {}}  # fmt: skip
    for m, ef in args.builds:
        label = f"m{m}-ef{ef}"
        if (m, ef) == args.builds[0]:  # the other layouts once, at the first build settings
            shared = build_shared(m, ef)
            shared["search"] = measure(ROWS, measured, queries, exact)
            drop_shared()
            result["layouts"][f"shared {label}"] = shared
            part = build_partitioned(due, args.hash, m, ef)
            part["search"] = measure(PART, measured, queries, exact)
            result["layouts"][f"partitioned {label}"] = part
            with _cursor() as cursor:
                cursor.execute(f"DROP TABLE {PART}")
        own = build_own(due, m, ef)
        with _cursor() as cursor:
            cursor.execute(f"ANALYZE {ROWS}")
        own["search"] = measure(ROWS, measured, queries, exact)
        for ef_search in args.ef_search:
            own[f"search at ef_search {ef_search}"] = measure(ROWS, measured, queries, exact, ef_search)
        drop_own(due)
        result["layouts"][f"own {label}"] = own
        print(f"{label}: {json.dumps(result['layouts'])}")
    result["planning_pk_lookup_ms"] = planning_cost(args.max_indexes)
    with _cursor() as cursor:
        cursor.execute(f"DROP TABLE {ROWS}")
    return result


def _build(text: str) -> tuple[int, int]:
    m, ef = text.split(",")
    return int(m), int(ef)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threshold", type=int, default=2000, help="SEARCH_EXACT_SCAN_LIMIT: own index past it.")
    parser.add_argument("--hash", type=int, default=16, help="Hash partitions for the organizations under it.")
    parser.add_argument("--queries", type=int, default=50, help="Queries per measured tenant.")
    parser.add_argument("--builds", type=_build, nargs="+", default=[(16, 64), (16, 128)], help="m,ef_construction")
    parser.add_argument(
        "--ef-search", type=int, nargs="*", default=[40, 200], help="Also search the own indexes with these."
    )
    parser.add_argument("--max-indexes", type=int, default=1000, help="Partial indexes for the planning measurement.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")
    import django

    django.setup()
    result = run(args)
    for name, layout in result["layouts"].items():
        print_table(f"{name}: built in {layout['build_seconds']} s, {layout['index_mb']} MB",
                    ["tenant rows", "p50 ms", "p95 ms", "recall@10"],
                    [[rows, row["p50"], row["p95"], row["recall_at_10"]]
                     for rows, row in layout["search"].items()])  # fmt: skip
    print_table("Planning a primary-key lookup", ["partial indexes", "p50 us", "p95 us"],
                [[row["partial_indexes"], row["p50_us"], row["p95_us"]]
                 for row in result["planning_pk_lookup_ms"]])  # fmt: skip
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
