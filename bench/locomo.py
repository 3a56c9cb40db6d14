"""LoCoMo retrieval benchmark through the platform's own service layer.

Protocol: every conversation goes into its own organization; every turn is one memory with text
"<speaker>: <text>" (plus " [shares a photo: <caption>]"), metadata {dia_id, session,
session_date, speaker}, written as an agent recording the conversation live would: with its
session as provenance (source {"session": "<conversation>/<n>"}) and at the session's time (turns
30 seconds apart; the bench sets created_at, which the service layer takes from the clock). Every
question of categories 1-4 is searched with top_k inside its conversation; a hit is a returned
memory whose dia_id is among the question's evidence turns. R@k is the mean fraction of evidence
turns found in the top k; MRR uses the first hit.

Reported: R@5, R@10 and MRR per category and overall, with the default score floor (what users
get) and without it (min_score 0); search p50/p95 through the service layer (floor on); and the
rejection figure: every question searched in each *other* conversation's organization, the share
that returns nothing (nothing scores above the floor).

    python bench/locomo.py --data path/to/locomo-dev.json --json bench/results/$(date +%F)/locomo.json
    python bench/locomo.py --data ... --loco   # also: each conversation scored by a model fitted on the others
    python bench/locomo.py --data ... --fit    # fit the model (memories/search/model.py), print it

--fit fits the ranking model and its calibration (bench/locomo_fit.py), measures them
leave-one-conversation-out (offline on the candidates' features, and through the service layer),
sweeps the floor, and prints the models fitted on every conversation, to paste into
memories/search/model.py.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import bench_database, print_table, summary_ms, write_json

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")
TURN_SECONDS = 30
FLOORS = [0.0, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3]


def evidence_ids(raw: list[str], known: set[str]) -> set[str]:
    """Normalise evidence strings ("D8:6; D9:17", "D:11:26", "D30:05") to turn ids that exist."""
    found = set()
    for item in raw:
        for session, turn in _EVIDENCE.findall(item):
            dia_id = f"D{int(session)}:{int(turn)}"
            if dia_id in known:
                found.add(dia_id)
    return found


def session_time(text: str) -> datetime | None:
    """ "1:56 pm on 8 May, 2023" as a UTC datetime."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return None


def turns(conversation: dict[str, Any], sample_id: str = "") -> list[dict[str, Any]]:
    result = []
    sessions = sorted(
        (int(key.split("_")[1]), key)
        for key in conversation
        if key.startswith("session_") and not key.endswith("date_time")
    )
    for number, key in sessions:
        date = conversation.get(f"{key}_date_time", "")
        started = session_time(date)
        for index, turn in enumerate(conversation[key]):
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
                    "source": {"session": f"{sample_id}/{number}"},
                    "at": started + timedelta(seconds=TURN_SECONDS * index) if started else None,
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


Question = tuple[int, Any, dict[str, Any], set[str]]  # conversation index, principal, qa, evidence


def _params(args: argparse.Namespace, query: str, min_score: float | None) -> Any:
    from memories.search import SearchParams

    return SearchParams.build(
        query=query,
        mode=args.mode,
        limit=args.top_k,
        vector_weight=args.vector_weight,
        keyword_weight=args.keyword_weight,
        fusion=args.fusion,
        min_score=min_score,
    )


def evaluate(
    args: argparse.Namespace, questions: list[Question], min_score: float | None, progress: str = ""
) -> tuple[dict[int, list[Row]], list[float]]:
    from tqdm import tqdm

    from memories.search import memory_search

    per_category: dict[int, list[Row]] = defaultdict(list)
    search_times: list[float] = []
    for _, principal, qa, evidence in tqdm(questions, desc=progress, unit="q", file=sys.stderr, disable=not progress):
        params = _params(args, qa["question"], min_score)
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


def rejection(args: argparse.Namespace, questions: list[Question], principals: list[Any], progress: str = "") -> float:
    """The share of questions that, asked of another conversation's organization, return nothing."""
    from tqdm import tqdm

    from memories.search import memory_search

    empty = []
    for conversation, _, qa, _ in tqdm(questions, desc=progress, unit="q", file=sys.stderr, disable=not progress):
        for other, principal in enumerate(principals):
            if other != conversation:
                empty.append(not memory_search(principal, _params(args, qa["question"], None)).hits)
    return round(sum(empty) / max(len(empty), 1), 4)


def summarize(per_category: dict[int, list[Row]]) -> dict[str, Any]:
    all_rows = [row for rows in per_category.values() for row in rows]
    return {
        "overall": aggregate(all_rows),
        "by_category": {CATEGORIES[c]: aggregate(rows) for c, rows in sorted(per_category.items())},
    }


def ingest(data: list[dict[str, Any]], keep: bool) -> tuple[list[Any], list[set[str]], list[float]]:
    from tqdm import tqdm

    from memories.models import Memory
    from memories.services import memory_create
    from organizations.models import Organization
    from organizations.principal import Principal
    from organizations.services import organization_create
    from organizations.tokens import principal_for_token, token_create

    write_times: list[float] = []
    total_turns = sum(len(turns(sample["conversation"])) for sample in data)
    progress = tqdm(total=total_turns, desc="ingest", unit="turn", file=sys.stderr)
    principals, known_ids = [], []
    for sample in data:
        slug = re.sub(r"[^a-z0-9-]", "-", f"locomo-{sample['sample_id']}".lower())
        existing = Organization.objects.filter(slug=slug).first() if keep else None
        organization = existing or organization_create(slug=slug, name=slug, operator="bench")
        issued = token_create(principal=Principal.for_operator(organization, "bench"), role="agent", name="bench")
        principal = principal_for_token(issued.raw)
        conversation = turns(sample["conversation"], sample["sample_id"])
        held = Memory.objects.filter(organization=organization)
        if existing is not None and held.count() == len(conversation):
            progress.update(len(conversation))
        else:
            held.delete()  # a kept database interrupted halfway: write the conversation again
            for turn in conversation:
                started = time.perf_counter()
                memory, _ = memory_create(
                    principal=principal,
                    data={
                        "scope_type": "organization",
                        "memory_type": "fact",
                        "current_content": turn["text"],
                        "metadata": turn["metadata"],
                        "source": turn["source"],
                    },
                )
                write_times.append(time.perf_counter() - started)
                if turn["at"] is not None:  # written when the conversation took place
                    Memory.objects.filter(pk=memory.pk).update(created_at=turn["at"], updated_at=turn["at"])
                progress.update(1)
        principals.append(principal)
        known_ids.append({turn["metadata"]["dia_id"] for turn in conversation})
    progress.close()
    return principals, known_ids, write_times


@contextmanager
def fold_models(folds: dict[int, Any] | None, conversation: int) -> Iterator[None]:
    """Search with the models fitted without ``conversation`` (or the shipped ones)."""
    from memories.search.model import using

    if folds is None:
        yield
        return
    with using(**folds[conversation]):
        yield


def measure(
    args: argparse.Namespace, questions: list[Question], principals: list[Any], folds: dict[int, Any] | None
) -> dict[str, Any]:
    """Floor on and off, latency, rejection; per conversation under its fold's models when given."""
    on: dict[int, list[Row]] = defaultdict(list)
    off: dict[int, list[Row]] = defaultdict(list)
    times: list[float] = []
    rejected: list[tuple[float, int]] = []
    label = "loco " if folds else ""
    for conversation in range(len(principals)):
        mine = [q for q in questions if q[0] == conversation]
        with fold_models(folds, conversation):
            for rows, floor, out in ((on, None, times), (off, 0.0, [])):
                per_category, search_times = evaluate(args, mine, floor, progress=f"{label}search {conversation}")
                out.extend(search_times)
                for category, values in per_category.items():
                    rows[category].extend(values)
            if not args.no_rejection:
                share = rejection(args, mine, principals, progress=f"{label}rejection {conversation}")
                rejected.append((share, len(mine)))
    search = summary_ms(times)
    result = {
        "floor_on": summarize(on),
        "floor_off": summarize(off),
        "latency_ms": {"search_p50": search["p50"], "search_p95": search["p95"]},
    }
    if rejected:
        result["rejection"] = round(sum(s * n for s, n in rejected) / sum(n for _, n in rejected), 4)
    return result


def run(args: argparse.Namespace) -> dict[str, Any]:
    from django.conf import settings

    data = json.loads(Path(args.data).read_text())
    if args.limit_conversations:
        data = data[: args.limit_conversations]
    principals, known_ids, write_times = ingest(data, args.keep)
    questions: list[Question] = [
        (index, principals[index], qa, evidence_ids(qa.get("evidence", []), known_ids[index]))
        for index, sample in enumerate(data)
        for qa in sample["qa"]
        if qa.get("category") in CATEGORIES
    ]
    questions = [q for q in questions if q[3]]
    result: dict[str, Any] = {
        "benchmark": "locomo",
        "mode": args.mode,
        "top_k": args.top_k,
        "fusion": args.fusion or settings.SEARCH_FUSION,
        "default_floor": settings.SEARCH_MIN_SCORE,
        "conversations": len(data),
        "memories": sum(len(ids) for ids in known_ids),
        "write_p50_ms": summary_ms(write_times)["p50"] if write_times else None,
    }
    folds = None
    if args.fit:
        from bench.locomo_fit_run import fit_and_report

        folds, result["fit"] = fit_and_report(args, questions, principals, data)
        if args.fit_only:
            return result
    result["shipped"] = measure(args, questions, principals, None)
    if args.loco or args.fit:
        if folds is None:
            from bench.locomo_fit_run import fit_folds

            folds = fit_folds(args, questions, principals)
        result["loco"] = measure(args, questions, principals, folds)
    return result


def _print(title: str, measured: dict[str, Any]) -> None:
    on, off = measured["floor_on"], measured["floor_off"]
    rows = []
    for name in [*CATEGORIES.values(), "overall"]:
        a = off["overall"] if name == "overall" else off["by_category"].get(name)
        b = on["overall"] if name == "overall" else on["by_category"].get(name)
        if a and b:
            rows.append([name, a["r_at_5"], a["r_at_10"], a["mrr"], b["r_at_10"], a["n"]])
    print_table(title, ["category", "R@5", "R@10", "MRR", "R@10 floor", "n"], rows)
    latency = measured["latency_ms"]
    extra = f", rejection {measured['rejection']:.3f}" if "rejection" in measured else ""
    print(f"  search p50 {latency['search_p50']} ms, p95 {latency['search_p95']} ms{extra}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="Path to locomo-dev.json (or locomo10.json).")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--mode", choices=["hybrid", "vector", "keyword"], default="hybrid")
    parser.add_argument("--vector-weight", type=float, default=None, help="Override SEARCH_VECTOR_WEIGHT.")
    parser.add_argument("--keyword-weight", type=float, default=None, help="Override SEARCH_KEYWORD_WEIGHT.")
    parser.add_argument("--limit-conversations", type=int, default=0, help="Only the first N conversations.")
    parser.add_argument("--fusion", choices=["model", "rrf", "score"], default=None, help="Override SEARCH_FUSION.")
    parser.add_argument(
        "--loco", action="store_true", help="Also score each conversation by a model fitted on the others."
    )
    parser.add_argument("--fit", action="store_true", help="Fit the model, sweep the floor, print the fitted model.")
    parser.add_argument("--no-rejection", action="store_true", help="Skip the cross-conversation rejection run.")
    parser.add_argument(
        "--features-cache",
        default=None,
        help="--fit/--loco: keep the candidates' features in this file (and reuse it).",
    )
    parser.add_argument("--fit-only", action="store_true", help="--fit: stop after fitting (no service-layer runs).")
    parser.add_argument("--keep", action="store_true", help="Keep the database and reuse what it holds.")
    parser.add_argument("--json", dest="json_out", default=None, help="Write the results here.")
    args = parser.parse_args()
    if not Path(args.data).exists():
        parser.error(f"--data {args.data}: no such file")

    with bench_database("locomo", keep=args.keep):
        result = run(args)

    if "shipped" in result:
        _print(
            f"LoCoMo retrieval ({result['mode']}, top {args.top_k}, categories 1-4), shipped model", result["shipped"]
        )
    if "loco" in result:
        _print("Leave-one-conversation-out (each conversation scored by a model fitted on the others)", result["loco"])
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
