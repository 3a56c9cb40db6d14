"""The keyword retriever in a large organization: how it reads its candidates, timed and checked
against BM25 over every match.

Runs on a database kept by bench/scale.py (the same ``--memories``, ``--organizations``,
``--largest-share`` and ``--seed``: it must already hold that corpus). For each of the ``--tenants``
largest organizations, ``--queries`` of its questions (a seed of their own) go through
``keyword_candidates`` (the hybrid pool, 50 candidates) with an agent token's principal, once for
each way of reading candidates, the ways alternated twice:

- ``rarest``: the rarest words' matches, within KEYWORD_SCORED_ROWS, pre-ranked by ts_rank (what
  every search did before SEARCH_KEYWORD_MATCH_BUDGET);
- ``paired``: past SEARCH_KEYWORD_MATCH_BUDGET matches, the memories holding the two rarest words
  first (memories/search/keyword.py);
- ``paired-3``: the same with any two of the three rarest.

Each is timed (the statement and its Python, in process) and compared with BM25 over every memory
matching any word of the question (no pre-rank): the share of that exact top 10 (and top 50) it
returns. Then ``memory_search`` (hybrid, limit 10) with the budget off and on: p50, how many
questions get the same ten memories in the same order, and for the questions that paraphrase one
memory, how often a memory of that text is among the ten.

    python bench/scale.py --memories 200000 --organizations 20 --largest-share 0.5 --real 5000 --keep
    python bench/keyword_scale.py --memories 200000 --organizations 20 --largest-share 0.5 \\
        --json bench/results/$(date +%F)/keyword-scale-200k.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, scratch_database, summary_ms, write_json
from bench.ingest import tenant_queries

WAYS = {"rarest": (0, 2), "paired": (2000, 2), "paired-3": (2000, 3)}  # budget, KEYWORD_PAIRED_TERMS


@contextmanager
def _way(budget: int, paired_terms: int, *, exhaustive: bool = False) -> Iterator[None]:
    from django.conf import settings

    from memories.search import keyword

    saved = (settings.SEARCH_KEYWORD_MATCH_BUDGET, keyword.KEYWORD_PAIRED_TERMS, keyword.RARE_TERM_SHARE)
    saved_rank = keyword.KEYWORD_PRE_RANK
    settings.SEARCH_KEYWORD_MATCH_BUDGET, keyword.KEYWORD_PAIRED_TERMS = budget, paired_terms
    if exhaustive:  # every word selects, every match is scored
        keyword.RARE_TERM_SHARE, keyword.KEYWORD_PRE_RANK = 1.0, 10**9
    try:
        yield
    finally:
        settings.SEARCH_KEYWORD_MATCH_BUDGET, keyword.KEYWORD_PAIRED_TERMS, keyword.RARE_TERM_SHARE = saved
        keyword.KEYWORD_PRE_RANK = saved_rank


def _timed(call: Callable[[str], list[Any]], queries: list[str]) -> tuple[list[list[Any]], list[float]]:
    found, times = [], []
    for query in queries:
        started = time.perf_counter()
        found.append(call(query))
        times.append(time.perf_counter() - started)
    return found, times


def _share(found: list[list[Any]], exact: list[list[Any]], n: int) -> float:
    shares = [len(set(f[:n]) & set(e[:n])) / max(1, len(e[:n])) for f, e in zip(found, exact, strict=True)]
    return round(statistics.mean(shares), 3)


def measure(slug: str, rows: int, queries: list[str], sources: list[str | None]) -> dict[str, Any]:
    from django.conf import settings

    from bench.search_latency import agent_principal
    from memories.models import Memory
    from memories.search.keyword import QueryTerms, keyword_candidates
    from memories.search.params import SearchParams
    from memories.search.pipeline import _Scope, memory_search

    principal = agent_principal(slug)
    scope = _Scope.of(principal, SearchParams.build(query="scope", limit=10)).sql
    pool = settings.SEARCH_CANDIDATES

    def keywords(query: str) -> list[Any]:
        terms = QueryTerms.of(principal.organization.pk, query)
        return [c.pk for c in keyword_candidates(scope, terms, pool)[0]]

    def hybrid(query: str) -> list[Any]:
        return [hit.memory.pk for hit in memory_search(principal, SearchParams.build(query=query, limit=10)).hits]

    with _way(0, 2, exhaustive=True):
        exact, exact_times = _timed(keywords, queries)
    with _way(*WAYS["rarest"]):
        _timed(keywords, queries[:20])  # warm
    result: dict[str, Any] = {"rows": rows, "exhaustive_ms": summary_ms(exact_times), "keyword": {}, "hybrid": {}}
    times: dict[str, list[float]] = {way: [] for way in WAYS}
    for order in (list(WAYS), list(reversed(WAYS))):
        for way in order:
            with _way(*WAYS[way]):
                found, took = _timed(keywords, queries)
            times[way] += took
            result["keyword"][way] = {
                "recall_at_10": _share(found, exact, 10),
                "recall_at_50": _share(found, exact, 50),
            }
    for way in WAYS:
        result["keyword"][way]["ms"] = summary_ms(times[way])
    answers: dict[str, list[list[Any]]] = {}
    hybrid_times: dict[str, list[float]] = {"rarest": [], "paired": []}
    for order in (["rarest", "paired"], ["paired", "rarest"]):
        for way in order:
            with _way(*WAYS[way]):
                answers[way], took = _timed(hybrid, queries)
            hybrid_times[way] += took
    for way, took in hybrid_times.items():
        result["hybrid"][way] = {"ms": summary_ms(took)}
    same = sum(a == b for a, b in zip(answers["rarest"], answers["paired"], strict=True))
    result["hybrid"]["same_top_10"] = f"{same}/{len(queries)}"
    # The questions that paraphrase a memory: is a memory of that text among the ten?
    texts = {text for text in sources if text}
    holding: dict[str, set[Any]] = {}
    for pk, text in Memory.objects.filter(organization=principal.organization, current_content__in=texts).values_list(
        "pk", "current_content"
    ):
        holding.setdefault(text, set()).add(pk)
    asked = [(i, holding.get(text, set())) for i, text in enumerate(sources) if text]
    for way in hybrid_times:
        found = sum(bool(set(answers[way][i]) & pks) for i, pks in asked)
        result["hybrid"][way]["paraphrased_memory_in_top_10"] = f"{found}/{len(asked)}"
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=200_000)
    parser.add_argument("--organizations", type=int, default=20)
    parser.add_argument("--largest-share", type=float, default=0.5)
    parser.add_argument("--smallest", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--tenants", type=int, default=2, help="The largest this many organizations.")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    with scratch_database(f"scale_{args.memories}", keep=True):
        from bench.scale import _loaded, build_tenants

        if not _loaded():
            raise SystemExit(f"bench_scale_{args.memories} holds no corpus: run bench/scale.py with --keep first")
        tenants = build_tenants(args)[: args.tenants]
        results = {}
        for tenant in tenants:
            sources: list[str | None] = []
            queries = tenant_queries(tenant, args.queries, args.seed + 4, sources)
            results[tenant.slug] = measure(tenant.slug, tenant.rows, queries, sources)
    for slug, row in results.items():
        print_table(
            f"{slug} ({row['rows']} rows): keyword candidates, against BM25 over every match "
            f"(p50 {row['exhaustive_ms']['p50']} ms)",
            ["way", "p50 ms", "p95 ms", "max ms", "recall@10", "recall@50"],
            [[way, r["ms"]["p50"], r["ms"]["p95"], r["ms"]["max"], r["recall_at_10"], r["recall_at_50"]]
             for way, r in row["keyword"].items()],
        )  # fmt: skip
        hybrid = row["hybrid"]
        print(f"hybrid memory_search p50: rarest {hybrid['rarest']['ms']['p50']} ms, paired "
              f"{hybrid['paired']['ms']['p50']} ms; same top 10 {hybrid['same_top_10']}; the paraphrased "
              f"memory in the top 10: rarest {hybrid['rarest']['paraphrased_memory_in_top_10']}, "
              f"paired {hybrid['paired']['paraphrased_memory_in_top_10']}")  # fmt: skip
    write_json(args.json_out, {"benchmark": "keyword_scale", "memories": args.memories,
                               "organizations": args.organizations, "tenants": results})  # fmt: skip


if __name__ == "__main__":
    main()
