"""Fit the ranking model and its calibration on every dev set at once, measured leave-one-set-out.

    python bench/retrieval_fit.py --faq-dev /work/shared/data/faq-dev/faq-dev.json \\
        --locomo /work/shared/data/locomo/locomo-dev.json --cache var/bench/fit-candidates.pkl \\
        --json bench/results/$(date +%F)/retrieval-fit.json
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.retrieval import DATA, DEFAULT_SETS
from bench.retrieval_collect import Asked, collect_locomo, collect_set


def collect(args: argparse.Namespace) -> list[Asked]:
    cache = Path(args.cache) if args.cache else None
    if cache is not None and cache.exists():
        with cache.open("rb") as file:
            asked: list[Asked] = pickle.load(file)  # noqa: S301 - a file this command wrote
        return asked
    paths = [Path(p) for p in ([args.faq_dev] if args.faq_dev else []) + list(args.sets)]
    asked = []
    for path in paths:
        asked += collect_set(path, first_org=1000 * (len({a.group for a in asked}) + 1))
    if args.locomo:
        asked += collect_locomo(Path(args.locomo), first_org=0)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        with cache.open("wb") as file:
            pickle.dump(asked, file)
    return asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--faq-dev", default=None, help="The FAQ dev set (faq-dev.json).")
    parser.add_argument("--sets", nargs="*", default=[str(DATA / name) for name in DEFAULT_SETS])
    parser.add_argument("--locomo", default=None, help="locomo-dev.json.")
    parser.add_argument("--cache", default=None, help="Keep the collected candidates here (read when it exists).")
    parser.add_argument("--floors", nargs="+", type=float, default=[0.005, 0.01, 0.02])
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    asked = collect(args)
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")
    django.setup()
    from bench._common import write_json
    from bench.retrieval_models import CHOSEN, METHODS, model_numbers

    payload: dict[str, Any] = {
        "benchmark": "retrieval-fit",
        "searches": len(asked),
        "held_out": experiment(asked, args.floors),
        "chosen": CHOSEN.name,
        "statement_model": model_numbers(CHOSEN.fit([a for a in asked if a.group != "locomo"])),
        "methods": {m.name: m.describe() for m in METHODS},
    }
    print("statement model (every set but LoCoMo):", payload["statement_model"])
    write_json(args.json_out, payload)


def fold_of(a: Asked) -> tuple[str, int]:
    """What is held out together: a FAQ-format set whole; LoCoMo one conversation at a time (its
    questions, asked anywhere, and every question asked of it)."""
    return (a.group, 0) if a.group != "locomo" else (a.group, a.org)


def held_out(method: Any, asked: list[Asked], group: str) -> Any:
    """``group``'s searches ranked each by ``method`` fitted without its fold."""
    from bench.retrieval_models import model_ranker

    fitted = {}
    for fold in {fold_of(a) for a in asked if a.group == group}:
        held = fold[0] == "locomo"
        train = [
            a
            for a in asked
            if fold_of(a) != fold
            and not (held and a.group == "locomo" and a.searched == fold[1])
            and not (method.documents and a.group == "locomo")
        ]
        fitted[fold] = model_ranker(method.fit(train))

    def rank(a: Asked) -> Any:
        fold = fold_of(a) if a.own or a.group != "locomo" else ("locomo", a.org)
        return fitted[fold](a)

    return rank


def experiment(asked: list[Asked], floors: list[float]) -> dict[str, Any]:
    """Every set under every floor: each retriever alone and the shipped models as they are, and
    every method held out (fitted without the set, or without the LoCoMo conversation)."""
    from bench.retrieval_models import METHODS, measure, shipped_ranker, single_ranker
    from memories.search.model import KEYWORD, VECTOR

    groups = sorted({a.group for a in asked})
    rankers: dict[str, dict[str, Any]] = {}
    for group in groups:
        rankers[group] = {
            "vector": single_ranker("sim", VECTOR),
            "keyword": single_ranker("kn", KEYWORD),
            "shipped": shipped_ranker(),
        }
        for method in METHODS:
            if group != "locomo" or not method.documents:
                rankers[group][method.name] = held_out(method, asked, group)
    rows: dict[str, Any] = {}
    for floor in floors:
        print(f"floor {floor}")
        for group in groups:
            mine = [a for a in asked if a.group == group]
            line = rows.setdefault(group, {}).setdefault(str(floor), {})
            for name, ranker in rankers[group].items():
                m = line[name] = measure(mine, ranker, floor)
                print(
                    f"  {group:24} {name:20} R@1 {m['r_at_1']:.3f} MRR {m['mrr_at_10']:.3f} R@10 {m['r_at_10']:.3f}"
                    f" false floor {m['false_floor']:.3f} rejection {m['foreign_rejection']}"
                )
    return rows


if __name__ == "__main__":
    main()
