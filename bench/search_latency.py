"""Search latency and vector recall at scale, through the service layer, many organizations.

For each --memories size: the synthetic corpus of bench/ingest.py (one large tenant with ~50% of
the rows, four medium ones, a tiny one with 1%, one of 50 rows, 40 small ones) goes in through
memory_batch_create, timed against the raw embedding throughput; then ANALYZE. Then, for the
large, a medium, the tiny and the 50-row tenant, --queries questions of that tenant go through
memory_search (limit 10) in hybrid, vector and keyword mode, timed end to end (query embedding
included), with an agent token's principal.

Recall@10: the vector retriever as production runs it for that tenant (vector_candidates: an exact
scan when the tenant's visible scope has <= SEARCH_EXACT_SCAN_LIMIT rows, else the HNSW index with
iterative scan) against a brute-force exact top 10 over the same scope, with index scans off. A
returned row counts when its distance is within the exact 10th distance (ties are not misses).
"*_forced_hnsw" repeats it with SEARCH_EXACT_SCAN_LIMIT=0, so the HNSW path serves that tenant too.

    python bench/search_latency.py --memories 10000 100000 --json bench/results/$(date +%F)/search_latency.json

--keep keeps each size's database (bench_search_latency_<N>) and skips the ingest when it already
holds that corpus (the ingest figures of the run that loaded it are reported again). --explain
prints, for one hybrid search per tenant, every SQL statement with its time and the plan of the
slowest.
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

from bench._common import CpuMeter, backend_pid, percentile, print_table, scratch_database, summary_ms, write_json
from bench.ingest import EmbedTimer, Tenant, build_corpus, ingest_table, measure_ingest, tenant_queries

MODES = ("hybrid", "vector", "keyword")
MEASURED = ("large", "medium", "tiny", "micro")  # "overall" is over the first three
LIMIT = 10
TARGETS = {"p50_ms": 30.0, "p95_ms": 60.0, "recall": 0.95, "ingest_ratio": 0.80}
LATENCY_COLUMNS = ("tenant", "visible rows", "vector path", "hybrid p50", "p95", "vector p50", "p95", "keyword p50")
LATENCY_COLUMNS += ("p95", "hybrid p99", "max")
CORPUS_VERSION = 2  # bump when bench/ingest.py's generator changes: kept databases are then reloaded


def latency(values_seconds: list[float]) -> dict[str, float]:
    """summary_ms plus the tail: p99 and the slowest."""
    ms = sorted(v * 1000 for v in values_seconds)
    return {**summary_ms(values_seconds), "p99": round(percentile(ms, 0.99), 2), "max": round(ms[-1], 2)}


# --- database state ----------------------------------------------------------------------------


def _meta(key: str) -> Any:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS bench_meta (key text PRIMARY KEY, value jsonb NOT NULL)")
        cursor.execute("SELECT value FROM bench_meta WHERE key = %s", [key])
        row = cursor.fetchone()
    return json.loads(row[0]) if row and isinstance(row[0], str) else (row[0] if row else None)


def _set_meta(key: str, value: Any) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO bench_meta (key, value) VALUES (%s, %s::jsonb) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            [key, json.dumps(value)],
        )


def load(args: argparse.Namespace, total: int, tenants: list[Tenant]) -> dict[str, Any]:
    """Ingest the corpus, unless a kept database already holds exactly it."""
    from django.db import connection

    from memories.models import Memory

    corpus_id = {"memories": total, "seed": args.seed, "batch_size": args.batch_size, "version": CORPUS_VERSION}
    stored = _meta("corpus")
    if stored and stored.get("id") == corpus_id and Memory.objects.count() == total:
        print(f"[{total}] kept database holds this corpus: ingest skipped", file=sys.stderr)
        return {**stored["ingest"], "reused_from_earlier_run": True}
    if Memory.objects.exists():
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE organizations_organization, bench_meta CASCADE")
    ingest = measure_ingest(tenants, args.batch_size, args.raw_every, seed=args.seed)
    _set_meta("corpus", {"id": corpus_id, "ingest": ingest})
    return ingest


def agent_principal(slug: str) -> Any:
    """A principal as an agent's API token gives it (what search sees in production)."""
    from organizations.models import Organization
    from organizations.principal import Principal
    from organizations.tokens import principal_for_token, token_create

    operator = Principal.for_operator(Organization.objects.get(slug=slug), "bench")
    return principal_for_token(token_create(principal=operator, role="agent", name="bench-search").raw)


def search_scope(principal: Any) -> Any:
    """The queryset memory_search searches for this principal with no filters."""
    from memories.selectors import MemoryFilters, memory_filter, memory_visible_queryset

    return memory_filter(memory_visible_queryset(principal), MemoryFilters())


def vector_path(scope: Any) -> tuple[str, int]:
    """Which path vector_candidates takes for this scope (same test), and the scope's size."""
    from django.conf import settings

    embedded = scope.filter(embedding__isnull=False)
    limit = settings.SEARCH_EXACT_SCAN_LIMIT
    small = embedded.values("pk").order_by()[: limit + 1].count() <= limit
    return ("exact" if small else "hnsw"), embedded.count()


# --- measurements ------------------------------------------------------------------------------


def time_searches(principal: Any, queries: list[str]) -> dict[str, dict[str, list[float]]]:
    """Per mode: wall time of memory_search, the query embedding's share of it, and the CPU seconds this
    process and the database backend spent on it. The modes take turns going first."""
    from bench._common import _process_jiffies
    from memories.search import SearchParams, memory_search

    pid = backend_pid()
    tick = os.sysconf("SC_CLK_TCK")
    kinds = ("wall", "embed", "bench_cpu", "postgres_cpu")
    times: dict[str, dict[str, list[float]]] = {mode: {kind: [] for kind in kinds} for mode in MODES}
    with EmbedTimer() as embed:
        for i, query in enumerate(queries):
            for mode in MODES[i % 3 :] + MODES[: i % 3]:
                params = SearchParams.build(query=query, mode=mode, limit=LIMIT)
                embed_before, jiffies = embed.seconds, _process_jiffies(pid) if pid else 0
                started, cpu_started = time.perf_counter(), time.process_time()
                memory_search(principal, params)
                times[mode]["wall"].append(time.perf_counter() - started)
                times[mode]["bench_cpu"].append(time.process_time() - cpu_started)
                times[mode]["embed"].append(embed.seconds - embed_before)
                times[mode]["postgres_cpu"].append(((_process_jiffies(pid) - jiffies) / tick) if pid else 0.0)
    return times


def exact_top(scope: Any, vector: list[float], k: int) -> list[tuple[Any, float]]:
    """Brute force: every row of the scope, ordered by true distance, no index."""
    from django.db import connection, transaction
    from django.db.models import ExpressionWrapper, FloatField, Value
    from pgvector.django import CosineDistance

    distance = CosineDistance("embedding", vector)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_indexscan = off")
            cursor.execute("SET LOCAL enable_indexonlyscan = off")
        return list(
            scope.filter(embedding__isnull=False)
            .annotate(distance=distance)
            .order_by(ExpressionWrapper(distance + Value(0.0), output_field=FloatField()), "pk")
            .values_list("pk", "distance")[:k]
        )


def recall(principal: Any, vectors: list[list[float]]) -> dict[str, Any]:
    """Recall@10 of the production vector retriever against exact search, and both their times."""
    from memories.search.caches import ScopeSQL
    from memories.search.pipeline import pool_size, scope_arms
    from memories.search.vector import vector_candidates
    from memories.selectors import MemoryFilters

    scope = search_scope(principal)
    searched = ScopeSQL.union(*scope_arms(principal, MemoryFilters()))  # as memory_search compiles it
    pool = pool_size(LIMIT)
    found, retriever_s, exact_s = [], [], []
    for vector in vectors:
        started = time.perf_counter()
        # As memory_search calls it: the scope-size answer is cached per organization.
        candidates = vector_candidates(searched, vector, pool, organization_id=principal.organization.pk)[:LIMIT]
        retriever_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        exact = exact_top(scope, vector, LIMIT)
        exact_s.append(time.perf_counter() - started)
        if not exact:
            continue
        cutoff = exact[-1][1] + 1e-6
        hits = sum(1 for c in candidates if c.similarity is not None and 1.0 - c.similarity <= cutoff)
        found.append(min(hits, len(exact)) / len(exact))
    return {
        "recall": round(sum(found) / len(found), 4) if found else float("nan"),
        "retriever_ms": summary_ms(retriever_s),
        "exact_ms": summary_ms(exact_s),
    }


def near_duplicate_rate(slug: str, sample: int = 200, threshold: float = 0.95) -> dict[str, float]:
    """Share of a tenant's memories whose nearest other memory has cosine similarity >= threshold."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute(
            "SELECT m.id FROM memories_memory m JOIN organizations_organization o ON o.id = m.organization_id "
            "WHERE o.slug = %s ORDER BY m.id LIMIT %s",
            [slug, sample],
        )
        ids = [row[0] for row in cursor.fetchall()]
        similarities = []
        for memory_id in ids:
            cursor.execute(
                "SELECT 1 - (n.embedding <=> m.embedding) FROM memories_memory m JOIN memories_memory n "
                "ON n.organization_id = m.organization_id AND n.id <> m.id WHERE m.id = %s "
                "ORDER BY (n.embedding <=> m.embedding) + 0 LIMIT 1",
                [memory_id],
            )
            similarities.append(float(cursor.fetchone()[0]))
    similarities.sort()
    return {
        "sample": len(similarities),
        "near_duplicate_rate": round(sum(s >= threshold for s in similarities) / len(similarities), 4),
        "threshold": threshold,
        "median_nearest_similarity": round(similarities[len(similarities) // 2], 4),
    }


def explain(principal: Any, query: str, label: str) -> None:
    """Every statement of one hybrid search with its time, and the plan of the slowest SELECT."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from memories.search import SearchParams, memory_search

    with CaptureQueriesContext(connection) as captured:
        memory_search(principal, SearchParams.build(query=query, limit=LIMIT))
    print(f"\n--- {label}: {query!r}")
    statements = captured.captured_queries
    for item in statements:
        print(f"  {float(item['time']) * 1000:7.2f} ms  {item['sql'][:150]}")
    selects = [(i, s) for i, s in enumerate(statements) if s["sql"].lstrip().upper().startswith(("SELECT", "WITH"))]
    if not selects:
        return
    index, slowest = max(selects, key=lambda pair: float(pair[1]["time"]))
    with transaction.atomic(), connection.cursor() as cursor:
        for earlier in statements[:index]:
            if earlier["sql"].startswith("SET LOCAL"):
                cursor.execute(earlier["sql"])
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + slowest["sql"])
        print("  plan of the slowest:")
        for (line,) in cursor.fetchall():
            print("    " + line)


def run_size(args: argparse.Namespace, total: int) -> dict[str, Any]:
    from django.conf import settings
    from django.test import override_settings

    from memories.embeddings import get_provider

    tenants = build_corpus(total, args.seed)
    ingest = load(args, total, tenants)
    by_role: dict[str, Tenant] = {}
    for tenant in tenants:
        by_role.setdefault(tenant.role, tenant)
    measured = [by_role[role] for role in MEASURED]
    principals = {t.role: agent_principal(t.slug) for t in measured}
    queries = {t.role: tenant_queries(t, args.queries, args.seed) for t in measured}
    provider = get_provider()

    # Warm-up (model, caches, connection): a few other questions of every measured tenant.
    for tenant in measured:
        time_searches(principals[tenant.role], tenant_queries(tenant, 5, args.seed + 1000))

    with CpuMeter(backend_pid()) as cpu:
        timings = {t.role: time_searches(principals[t.role], queries[t.role]) for t in measured}

    paths = {}
    for tenant in measured:
        paths[tenant.role] = vector_path(search_scope(principals[tenant.role]))
    vectors = {role: [provider.embed_one(q) for q in qs] for role, qs in queries.items()}
    recalls: dict[str, dict[str, Any]] = {}
    for tenant in measured:
        recalls[tenant.role] = {"path": paths[tenant.role][0], **recall(principals[tenant.role], vectors[tenant.role])}
    with override_settings(SEARCH_EXACT_SCAN_LIMIT=0):
        for role in MEASURED:
            if paths[role][0] == "exact":
                recalls[f"{role}_forced_hnsw"] = {"path": "hnsw", **recall(principals[role], vectors[role])}

    if args.explain:
        for tenant in measured:
            explain(principals[tenant.role], queries[tenant.role][0], f"{tenant.role} ({paths[tenant.role][1]} rows)")

    overall = {mode: [s for role in MEASURED[:3] for s in timings[role][mode]["wall"]] for mode in MODES}
    sizes = {t.role: t.rows for t in tenants if t.role != "small"}
    small = [t.rows for t in tenants if t.role == "small"]
    return {
        "memories": total,
        "tenants": {
            "organizations": len(tenants),
            **sizes,
            "small": {"count": len(small), "min": min(small), "max": max(small)},
            "system_scope_memories": 20,
            "visible_scope": {role: paths[role][1] for role in MEASURED},
            "vector_path": {role: paths[role][0] for role in MEASURED},
        },
        "ingest": ingest,
        "search_ms": {
            **{mode: latency(overall[mode]) for mode in MODES},
            "by_tenant": {role: {mode: latency(timings[role][mode]["wall"]) for mode in MODES} for role in MEASURED},
            # Where the time goes: the query embedding (wall) and CPU per search, mean ms (CPU is
            # what a search costs on an idle machine; the wall time also has waiting for a core).
            "breakdown": {
                role: {
                    mode: {
                        "embed_p50": summary_ms(timings[role][mode]["embed"])["p50"],
                        "bench_cpu_mean": summary_ms(timings[role][mode]["bench_cpu"])["mean"],
                        "postgres_cpu_mean": summary_ms(timings[role][mode]["postgres_cpu"])["mean"],
                    }
                    for mode in MODES
                }
                for role in MEASURED
            },
        },
        "recall_at_10": {key: value["recall"] for key, value in recalls.items()},
        "vector_retriever": {
            key: {"path": v["path"], "retriever_ms": v["retriever_ms"], "exact_ms": v["exact_ms"]}
            for key, v in recalls.items()
        },
        "corpus": near_duplicate_rate(by_role["large"].slug),
        "queries_per_tenant": args.queries,
        "search_cpu": cpu.result,
        "settings": {
            "SEARCH_EXACT_SCAN_LIMIT": settings.SEARCH_EXACT_SCAN_LIMIT,
            "SEARCH_HNSW_EF_SEARCH": settings.SEARCH_HNSW_EF_SEARCH,
            "SEARCH_CANDIDATES": settings.SEARCH_CANDIDATES,
            "SEARCH_FUSION": settings.SEARCH_FUSION,
        },
    }


# --- report ------------------------------------------------------------------------------------


def report(result: dict[str, Any]) -> None:
    total = result["memories"]
    tenants = result["tenants"]
    print(f"\n===== {total} memories, {tenants['organizations']} organizations =====")
    print(
        f"  small tenants: {tenants['small']['count']} of {tenants['small']['min']}-{tenants['small']['max']} rows; "
        f"{tenants['system_scope_memories']} system-scope memories seen by all; near-duplicates (cosine >= "
        f"{result['corpus']['threshold']} to the nearest other memory of the large tenant): "
        f"{result['corpus']['near_duplicate_rate']:.1%}, median nearest {result['corpus']['median_nearest_similarity']}"
    )
    ingest = result["ingest"]
    reused = " (kept database: figures of the run that loaded it)" if ingest.get("reused_from_earlier_run") else ""
    ingest_table(f"Ingest{reused}", ingest)

    rows = []
    search = result["search_ms"]
    for role in MEASURED:
        by_mode = search["by_tenant"][role]
        rows.append(
            [
                role,
                tenants["visible_scope"][role],
                tenants["vector_path"][role],
                *[by_mode[mode][q] for mode in MODES for q in ("p50", "p95")],
                by_mode["hybrid"]["p99"],
                by_mode["hybrid"]["max"],
            ]
        )
    rows.append(
        [
            "overall (large+medium+tiny)",
            "",
            "",
            *[search[mode][q] for mode in MODES for q in ("p50", "p95")],
            search["hybrid"]["p99"],
            search["hybrid"]["max"],
        ]
    )
    print_table(
        f"memory_search latency, ms (limit {LIMIT}, query embedding included, {result['queries_per_tenant']} "
        "queries per tenant)",
        [*LATENCY_COLUMNS],
        rows,
    )
    breakdown = search["breakdown"]
    print_table(
        "Where a search's time goes, ms: query embedding (wall p50); CPU per search (mean) of the bench process "
        "(embedding included) and of postgres",
        ["tenant", *[f"{mode[:3]} {part}" for mode in MODES for part in ("embed", "py cpu", "pg cpu")]],
        [
            [
                role,
                *[
                    breakdown[role][mode][k]
                    for mode in MODES
                    for k in ("embed_p50", "bench_cpu_mean", "postgres_cpu_mean")
                ],
            ]
            for role in MEASURED
        ],
    )
    cpu = result["search_cpu"]
    print(
        f"  during search: cores busy {cpu.get('busy_cores')} (bench {cpu.get('bench_cores')}, postgres "
        f"{cpu.get('postgres_cores')}, other work {cpu.get('other_cores')}), load {cpu['loadavg_1m_before']} -> "
        f"{cpu['loadavg_1m_after']}"
    )
    columns = [("retriever_ms", "p50"), ("retriever_ms", "p95"), ("exact_ms", "p50")]
    print_table(
        "Vector recall@10 against exact search",
        ["tenant", "path", "recall@10", "retriever p50 ms", "p95", "exact p50 ms"],
        [
            [key, v["path"], result["recall_at_10"][key], *(v[t][q] for t, q in columns)]
            for key, v in result["vector_retriever"].items()
        ],
    )


def targets(results: dict[str, dict[str, Any]]) -> None:
    rows = []
    for size, result in results.items():
        hybrid = result["search_ms"]["hybrid"]
        recall = result["recall_at_10"]
        ratio = result["ingest"]["ratio"]
        checks = [
            ("hybrid p50 <= 30 ms", hybrid["p50"], hybrid["p50"] <= TARGETS["p50_ms"]),
            ("hybrid p95 <= 60 ms", hybrid["p95"], hybrid["p95"] <= TARGETS["p95_ms"]),
            ("recall@10 large >= 0.95", recall["large"], recall["large"] >= TARGETS["recall"]),
            ("recall@10 tiny >= 0.95", recall["tiny"], recall["tiny"] >= TARGETS["recall"]),
            ("batch ingest / raw embed >= 0.80", ratio, ratio >= TARGETS["ingest_ratio"]),
        ]
        for key in ("tiny_forced_hnsw", "large_forced_hnsw"):
            if key in recall:
                checks.append((f"recall@10 {key} >= 0.95", recall[key], recall[key] >= TARGETS["recall"]))
        rows += [[size, name, value, "ok" if ok else "MISSED"] for name, value, ok in checks]
    print_table("Targets", ["memories", "target", "value", ""], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, nargs="+", default=[10000], help="One or more corpus sizes.")
    parser.add_argument("--queries", type=int, default=200, help="Questions per measured tenant.")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--raw-every", type=int, default=8, help="Re-embed every Nth batch raw (the raw rate).")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="Keep each size's database; reuse it if it matches.")
    parser.add_argument("--explain", action="store_true", help="Print statements and plans of one search each.")
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()

    random.seed(args.seed)
    results: dict[str, dict[str, Any]] = {}
    for total in args.memories:
        with scratch_database(f"search_latency_{total}", keep=args.keep):
            results[str(total)] = run_size(args, total)
        report(results[str(total)])
        write_json(args.json_out, results)  # after every size, so a long run leaves its results
    targets(results)


if __name__ == "__main__":
    main()
