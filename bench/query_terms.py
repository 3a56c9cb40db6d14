"""A query's words and their counts in a small organization: one statement against three.

Loads bench/ingest.py's synthetic corpus (``--memories`` over its organizations) into a throwaway
database, then for the tiny and the 50-row organization reads each of ``--queries`` questions'
terms (memories.search.keyword.QueryTerms.of) both ways, alternated question by question: the one
statement a small organization's search now runs (memories.search.caches.TermStatistics.small_terms)
and the three it ran before (the query's lexemes, the organization's count, the counts of its words).
Reported per way: p50 of the call, and the CPU of this process and of its PostgreSQL backend per call.

    python bench/query_terms.py --json bench/results/$(date +%F)/query-terms.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import _process_jiffies, backend_pid, bench_database, print_table, write_json
from bench.ingest import batch_ingest, build_corpus, tenant_queries


def run(args: argparse.Namespace) -> dict[str, Any]:
    from memories.search.caches import term_statistics
    from memories.search.keyword import QueryTerms
    from organizations.models import Organization

    tenants = build_corpus(args.memories)
    batch_ingest(tenants, batch_size=64)
    pid = backend_pid()
    results: dict[str, Any] = {}
    for tenant in (t for t in tenants if t.role in ("tiny", "micro")):
        organization = Organization.objects.get(slug=tenant.slug).pk
        QueryTerms.of(organization, "warm up")
        took: dict[str, list[float]] = {"one statement": [], "three statements": []}
        cpu = dict.fromkeys(took, 0.0)
        database_jiffies = dict.fromkeys(took, 0)
        for n, query in enumerate(tenant_queries(tenant, args.queries) * args.rounds):
            for way in list(took) if n % 2 == 0 else list(reversed(took)):
                if way == "one statement":  # the organization is known to be small
                    term_statistics._corpus[organization] = (time.monotonic(), tenant.rows, 1.0)
                else:  # not yet known: counted the way a large organization is
                    term_statistics._corpus.pop(organization, None)
                jiffies, started_cpu, started = (
                    _process_jiffies(pid) if pid else 0,
                    time.process_time(),
                    time.perf_counter(),
                )
                QueryTerms.of(organization, query)
                took[way].append(time.perf_counter() - started)
                cpu[way] += time.process_time() - started_cpu
                database_jiffies[way] += (_process_jiffies(pid) - jiffies) if pid else 0
        calls = len(took["one statement"])
        results[tenant.slug] = {
            "rows": tenant.rows,
            **{
                way: {
                    "p50_ms": round(statistics.median(times) * 1000, 3),
                    "python_cpu_ms": round(cpu[way] * 1000 / calls, 3),
                    "postgres_cpu_ms": round(database_jiffies[way] * 10 / calls, 3) if pid else None,
                }
                for way, times in took.items()
            },
        }
    return {"benchmark": "query_terms", "memories": args.memories, "calls_per_way": args.queries * args.rounds,
            "tenants": results}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=3000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    with bench_database("query_terms"):
        result = run(args)
    rows = [[slug, row["rows"], way, *row[way].values()] for slug, row in result["tenants"].items()
            for way in ("one statement", "three statements")]  # fmt: skip
    print_table("QueryTerms.of in a small organization", ["tenant", "rows", "way", "p50 ms", "python CPU ms",
                "PostgreSQL CPU ms"], rows)  # fmt: skip
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
