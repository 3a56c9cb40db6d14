"""LoCoMo retrieval benchmark through the platform's own service layer.

Protocol: every conversation goes into its own organization; every turn is one memory with text
"<speaker>: <text>" (plus " [shares a photo: <caption>]"), metadata {dia_id, session,
session_date, speaker}; every question of categories 1-4 is searched with top_k inside its
conversation; a hit is a returned memory whose dia_id is among the question's evidence turns.
R@k is the mean fraction of evidence turns found in the top k; MRR uses the first hit.

    python bench/locomo.py --data path/to/locomo-dev.json --top-k 10 --json bench/results/locomo.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import bench_database, print_table, summary_ms, write_json

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")


def evidence_ids(raw: list[str], known: set[str]) -> set[str]:
    """Normalise evidence strings ("D8:6; D9:17", "D:11:26", "D30:05") to turn ids that exist."""
    found = set()
    for item in raw:
        for session, turn in _EVIDENCE.findall(item):
            dia_id = f"D{int(session)}:{int(turn)}"
            if dia_id in known:
                found.add(dia_id)
    return found


def turns(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    result = []
    sessions = sorted(
        (int(key.split("_")[1]), key)
        for key in conversation
        if key.startswith("session_") and not key.endswith("date_time")
    )
    for number, key in sessions:
        date = conversation.get(f"{key}_date_time", "")
        for turn in conversation[key]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            result.append(
                {
                    "text": text,
                    "metadata": {
                        "dia_id": turn["dia_id"],
                        "session": number,
                        "session_date": date,
                        "speaker": turn["speaker"],
                    },
                }
            )
    return result


Row = tuple[float, float, float]


def aggregate(rows: list[Row]) -> dict[str, float]:
    n = len(rows)
    if not n:
        return {"r_at_5": 0.0, "r_at_10": 0.0, "mrr": 0.0, "n": 0}
    return {
        "r_at_5": round(sum(r[0] for r in rows) / n, 4),
        "r_at_10": round(sum(r[1] for r in rows) / n, 4),
        "mrr": round(sum(r[2] for r in rows) / n, 4),
        "n": n,
    }


def evaluate(
    args: argparse.Namespace,
    questions: list[tuple[Any, dict[str, Any], set[str]]],
    vector_weight: float | None,
    keyword_weight: float | None,
    progress: bool = False,
) -> tuple[dict[int, list[Row]], list[float]]:
    from tqdm import tqdm

    from memories.search import SearchParams, memory_search

    per_category: dict[int, list[Row]] = defaultdict(list)
    search_times: list[float] = []
    for principal, qa, evidence in tqdm(questions, desc="search", unit="q", file=sys.stderr, disable=not progress):
        params = SearchParams.build(
            query=qa["question"],
            mode=args.mode,
            limit=args.top_k,
            vector_weight=vector_weight,
            keyword_weight=keyword_weight,
            fusion=getattr(args, "fusion", None),
        )
        started = time.perf_counter()
        page = memory_search(principal, params)
        search_times.append(time.perf_counter() - started)
        ranked = [hit.memory.metadata.get("dia_id") for hit in page.hits]
        top5 = set(ranked[:5])
        top_k = set(ranked[: args.top_k])
        first = next((rank for rank, dia_id in enumerate(ranked, start=1) if dia_id in evidence), None)
        per_category[qa["category"]].append(
            (len(evidence & top5) / len(evidence), len(evidence & top_k) / len(evidence), 1 / first if first else 0.0)
        )
    return per_category, search_times


def sweep(args: argparse.Namespace, questions: list[tuple[Any, dict[str, Any], set[str]]]) -> None:
    """Print R@10 over a grid of fusion weights (to choose the defaults; see the README)."""
    rows = []
    for fusion in ("rrf", "score"):
        args.fusion = fusion
        for keyword_weight in (1.0, 1.5, 2.0, 3.0, 4.0):
            per_category, _ = evaluate(args, questions, 1.0, keyword_weight)
            overall = aggregate([row for rows in per_category.values() for row in rows])
            rows.append([fusion, 1.0, keyword_weight, overall["r_at_5"], overall["r_at_10"], overall["mrr"]])
    args.fusion = None
    print_table("Fusion sweep", ["fusion", "vector w", "keyword w", "R@5", "R@10", "MRR"], rows)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from tqdm import tqdm

    from memories.services import memory_create
    from organizations.principal import Principal
    from organizations.services import organization_create, principal_for_token, token_create

    data = json.loads(Path(args.data).read_text())
    if args.limit_conversations:
        data = data[: args.limit_conversations]

    write_times: list[float] = []

    total_turns = sum(len(turns(sample["conversation"])) for sample in data)
    progress = tqdm(total=total_turns, desc="ingest", unit="turn", file=sys.stderr)
    prepared = []
    for sample in data:
        slug = re.sub(r"[^a-z0-9-]", "-", f"locomo-{sample['sample_id']}".lower())
        organization = organization_create(slug=slug, name=slug, operator="bench")
        issued = token_create(principal=Principal.for_operator(organization, "bench"), role="agent", name="bench")
        principal = principal_for_token(issued.raw)
        known: set[str] = set()
        for turn in turns(sample["conversation"]):
            started = time.perf_counter()
            memory_create(
                principal=principal,
                data={
                    "scope_type": "organization",
                    "memory_type": "fact",
                    "current_content": turn["text"],
                    "metadata": turn["metadata"],
                },
            )
            write_times.append(time.perf_counter() - started)
            known.add(turn["metadata"]["dia_id"])
            progress.update(1)
        prepared.append((sample, principal, known))
    progress.close()

    questions = [
        (principal, qa, evidence_ids(qa.get("evidence", []), known))
        for sample, principal, known in prepared
        for qa in sample["qa"]
        if qa.get("category") in CATEGORIES
    ]
    questions = [(principal, qa, evidence) for principal, qa, evidence in questions if evidence]
    if args.sweep:
        sweep(args, questions)
    per_category, search_times = evaluate(args, questions, args.vector_weight, args.keyword_weight, progress=True)

    all_rows = [row for rows in per_category.values() for row in rows]
    write = summary_ms(write_times)
    search = summary_ms(search_times)
    return {
        "benchmark": "locomo",
        "mode": args.mode,
        "top_k": args.top_k,
        "weights": {"vector": args.vector_weight, "keyword": args.keyword_weight},
        "conversations": len(data),
        "memories": len(write_times),
        "overall": aggregate(all_rows),
        "by_category": {CATEGORIES[c]: aggregate(rows) for c, rows in sorted(per_category.items())},
        "latency_ms": {"write_p50": write["p50"], "search_p50": search["p50"], "search_p95": search["p95"]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="Path to locomo-dev.json (or locomo10.json).")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--mode", choices=["hybrid", "vector", "keyword"], default="hybrid")
    parser.add_argument("--vector-weight", type=float, default=None, help="Override SEARCH_VECTOR_WEIGHT.")
    parser.add_argument("--keyword-weight", type=float, default=None, help="Override SEARCH_KEYWORD_WEIGHT.")
    parser.add_argument("--limit-conversations", type=int, default=0, help="Only the first N conversations.")
    parser.add_argument("--fusion", choices=["rrf", "score"], default=None, help="Override SEARCH_FUSION.")
    parser.add_argument("--sweep", action="store_true", help="Also print R@10 over a grid of fusion weights.")
    parser.add_argument("--json", dest="json_out", default=None, help="Write the results here.")
    args = parser.parse_args()
    if not Path(args.data).exists():
        parser.error(f"--data {args.data}: no such file")

    with bench_database("locomo"):
        result = run(args)

    overall = result["overall"]
    print_table(
        f"LoCoMo retrieval ({result['mode']}, top {args.top_k}, categories 1-4)",
        ["category", "R@5", "R@10", "MRR", "n"],
        [
            [name, row["r_at_5"], row["r_at_10"], row["mrr"], row["n"]]
            for name, row in [*result["by_category"].items(), ("overall", overall)]
        ],
    )
    latency = result["latency_ms"]
    print_table(
        "Latency (ms)",
        ["write p50", "search p50", "search p95"],
        [[latency["write_p50"], latency["search_p50"], latency["search_p95"]]],
    )
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
