"""Retrieval on every dev set, hybrid against vector only and keyword only, through the service layer.

Protocol, per dev set (a JSON file in the FAQ dev set's format, ``{"orgs": {ORG: [{"id",
"content"}]}, "questions": [{"org", "question", "answer"}]}``), in a scratch database of its own:
every organization of the set becomes an organization of the platform, and each of its items one
memory, written by an agent through ``memories.services.memory_create`` (scope organization, type
fact, the item's id in its metadata). Each question is then asked by an agent of its own
organization through ``memories.search.memory_search``, with limit 10, in each of the three modes
the service offers (``SearchParams.mode``, the ``mode`` of the MCP tool ``memory-search`` and of
``POST /api/v1/memories/search/``; ``memory-vector-search`` is vector mode): ``hybrid`` (both
retrievers and the ranking model: what an agent gets by default), ``vector`` (the embedding alone)
and ``keyword`` (full text with BM25 alone). The one answer of a question is the memory with its
``answer`` id. Reported per set and mode:

- **R@1, MRR@10, R@10**: at ``min_score`` 0 (no floor), whether the answer is first, the mean
  reciprocal of its rank in the top 10, whether it is in the top 10;
- **false floor**: the share of questions whose answer is in the top 10 at ``min_score`` 0 but not
  among the results at the default floor (``SEARCH_MIN_SCORE``): answers the floor throws away;
- **foreign rejection**: every question asked, at the defaults, in each *other* organization of its
  set (where nothing answers it): the share of those searches that return nothing;
- **p50**: the median time of one search at the defaults, in-process (``memory_search`` called
  directly: no HTTP, no MCP), the query embedded each time.

Each mode is judged at its own default floor (vector and keyword scores are calibrated from their
one feature); the issue's figures are hybrid's. The JSON keeps, for every question and mode, the
answer's rank and score and the best score it got in the other organizations, so a floor can be
chosen from it, and the figures per organization and per question "kind" when a set gives one
(agent-questions.json: abbreviation, synonym, no-shared-words). Nothing is downloaded: the
embedding model is the project's default local ONNX model (all-MiniLM-L6-v2, int8 unless
``EMBEDDING_INT8`` says otherwise).

Sets: bench/data/faq-sqlalchemy-scrapy.json, bench/data/faq-docutils-coverage.json and
bench/data/agent-questions.json by default (bench/data/README.md says what each is); ``--faq-dev``
adds the FAQ dev set (Celery and Git) from its path, ``--sets`` replaces the shipped ones.
``--locomo`` also runs LoCoMo as bench/locomo.py does with the shipped model (its ingest and
measurement: R@5, R@10 and MRR per category with and without the floor, rejection, latency), in
hybrid mode unless ``--locomo-modes`` names more; ``--locomo-conversations N`` keeps the first N
conversations (the five take about ten minutes on two busy cores).

    python bench/retrieval.py --faq-dev /work/shared/data/faq-dev/faq-dev.json \\
        --locomo /work/shared/data/locomo/locomo-dev.json \\
        --json bench/results/$(date +%F)/retrieval.json
    python bench/retrieval.py --sets bench/data/agent-questions.json   # one set, no LoCoMo
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, scratch_database, summary_ms, write_json

DATA = Path(__file__).resolve().parent / "data"
DEFAULT_SETS = ("faq-sqlalchemy-scrapy.json", "faq-docutils-coverage.json", "agent-questions.json")
MODES = ("hybrid", "vector", "keyword")
LIMIT = 10
ID_KEY = "dev_id"  # the item's id, kept in the memory's metadata


def load_set(path: Path) -> dict[str, Any]:
    """A dev set, checked: every question names an organization of the set and an answer it holds."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    held = {org: {item["id"] for item in items} for org, items in data["orgs"].items()}
    for question in data["questions"]:
        if question["answer"] not in held.get(question["org"], set()):
            raise SystemExit(f"{path}: {question['question']!r}: no {question['answer']} in {question['org']}")
    if len(held) < 2:
        raise SystemExit(f"{path}: foreign rejection needs a second organization; the set has {len(held)}")
    return data


def agent_of(slug: str) -> Any:
    """A new organization and an agent of it, authenticated through its token as a request would be."""
    from organizations.principal import Principal
    from organizations.services import organization_create
    from organizations.tokens import principal_for_token, token_create

    organization = organization_create(slug=slug, name=slug, operator="bench")
    issued = token_create(principal=Principal.for_operator(organization, "bench"), role="agent", name="bench")
    return principal_for_token(issued.raw)


def store(data: dict[str, Any]) -> tuple[dict[str, Any], list[float], list[str]]:
    """Every organization's items as memories, written by its agent; the writes' times and refusals."""
    from memories.services import memory_create
    from memory_platform.exceptions import DomainError

    principals, times, refused = {}, [], []
    for org, items in data["orgs"].items():
        principal = principals[org] = agent_of(re.sub(r"[^a-z0-9-]", "-", org.lower()))
        for item in items:
            started = time.perf_counter()
            try:
                memory_create(
                    principal=principal,
                    data={
                        "scope_type": "organization",
                        "memory_type": "fact",
                        "current_content": item["content"],
                        "metadata": {ID_KEY: item["id"]},
                    },
                )
            except DomainError as error:  # reported: the question stays, and its answer cannot be found
                refused.append(f"{item['id']}: {error}")
                continue
            times.append(time.perf_counter() - started)
        visible = {hit.memory.metadata.get(ID_KEY) for hit in search(principal, "", "hybrid", None, limit=1000)}
        refused += [f"{item['id']}: stored but not listed" for item in items if item["id"] not in visible]
    return principals, times, refused


def search(principal: Any, query: str, mode: str, min_score: float | None, limit: int = LIMIT) -> list[Any]:
    from memories.search import SearchParams, memory_search

    params = SearchParams.build(query=query, mode=mode, limit=limit, min_score=min_score)
    return memory_search(principal, params).hits


@dataclass
class Tally:
    """One mode's figures over one set's questions."""

    ranks: list[int | None] = field(default_factory=list)  # the answer's rank in the top 10, floor 0
    floored: list[bool] = field(default_factory=list)  # in the top 10 at floor 0, gone at the default
    foreign_empty: list[bool] = field(default_factory=list)  # one per question and other organization
    times: list[float] = field(default_factory=list)  # searches at the defaults

    def summary(self) -> dict[str, Any]:
        n = len(self.ranks)
        found = [r for r in self.ranks if r is not None]
        return {
            "n": n,
            "r_at_1": round(sum(r == 1 for r in found) / n, 4) if n else None,
            "mrr_at_10": round(sum(1 / r for r in found) / n, 4) if n else None,
            "r_at_10": round(len(found) / n, 4) if n else None,
            "false_floor": round(sum(self.floored) / n, 4) if n else None,
            "foreign_rejection": (
                round(sum(self.foreign_empty) / len(self.foreign_empty), 4) if self.foreign_empty else None
            ),
            "foreign_searches": len(self.foreign_empty),
            "search_ms": summary_ms(self.times),
        }


def ask(question: dict[str, Any], principals: dict[str, Any], mode: str, tally: Tally) -> dict[str, Any]:
    """One question in one mode: own organization without and with the floor, then every other one."""
    own = principals[question["org"]]
    ranked = search(own, question["question"], mode, 0.0)
    ids = [hit.memory.metadata.get(ID_KEY) for hit in ranked]
    rank = ids.index(question["answer"]) + 1 if question["answer"] in ids else None
    started = time.perf_counter()
    kept = search(own, question["question"], mode, None)
    tally.times.append(time.perf_counter() - started)
    tally.ranks.append(rank)
    tally.floored.append(rank is not None and question["answer"] not in {h.memory.metadata.get(ID_KEY) for h in kept})
    foreign_best = 0.0
    for org, principal in principals.items():
        if org != question["org"]:
            tally.foreign_empty.append(not search(principal, question["question"], mode, None))
            best = search(principal, question["question"], mode, 0.0, limit=1)
            foreign_best = max(foreign_best, (best[0].score or 0.0) if best else 0.0)
    return {
        "rank": rank,
        "score": ranked[rank - 1].score if rank else None,
        "kept": rank is not None and not tally.floored[-1],
        "top_score": ranked[0].score if ranked else None,
        "foreign_best_score": round(foreign_best, 6),
    }


def warm_up(principals: dict[str, Any]) -> None:
    """The model's first run and each organization's first search are not what an agent waits for."""
    for principal in principals.values():
        for mode in MODES:
            search(principal, "how do I get started", mode, None)


def run_set(path: Path) -> dict[str, Any]:
    from tqdm import tqdm

    data = load_set(path)
    name = path.stem
    with scratch_database("retrieval_" + re.sub(r"[^a-z0-9]", "_", name.lower())):
        from memories.search import search_caches

        search_caches.reset()  # another set's database may have had organizations of the same ids
        principals, write_times, refused = store(data)
        warm_up(principals)
        tallies = {mode: Tally() for mode in MODES}
        per_question = []
        for question in tqdm(data["questions"], desc=name, unit="q", file=sys.stderr):
            record = {key: question[key] for key in ("org", "question", "answer", "kind") if key in question}
            for mode in MODES:
                record[mode] = ask(question, principals, mode, tallies[mode])
            per_question.append(record)
        by_org = _groups(data["questions"], "org", tallies)
        by_kind = _groups(data["questions"], "kind", tallies)
        search_caches.reset()  # writes out the access tally while this database exists
    return {
        "set": name,
        "path": str(path),
        "organizations": {org: len(items) for org, items in data["orgs"].items()},
        "questions": len(data["questions"]),
        "refused_writes": refused,
        "write_p50_ms": summary_ms(write_times)["p50"] if write_times else None,
        "modes": {mode: tallies[mode].summary() for mode in MODES},
        "by_organization": by_org,
        "by_kind": by_kind,
        "per_question": per_question,
    }


def _groups(questions: list[dict[str, Any]], key: str, tallies: dict[str, Tally]) -> dict[str, Any]:
    """The figures of each group of questions sharing ``key`` (their organization, their "kind")."""
    groups: dict[str, list[int]] = {}
    for index, question in enumerate(questions):
        if key in question:
            groups.setdefault(question[key], []).append(index)
    return {name: {mode: _subset(tallies[mode], indexes) for mode in MODES} for name, indexes in groups.items()}


def _subset(tally: Tally, indexes: list[int]) -> dict[str, Any]:
    """One organization's questions' figures (without foreign rejection, counted per set)."""
    part = Tally(ranks=[tally.ranks[i] for i in indexes], floored=[tally.floored[i] for i in indexes])
    summary = part.summary()
    for key in ("foreign_rejection", "foreign_searches", "search_ms"):
        summary.pop(key)
    return summary


def run_locomo(path: Path, conversations: int, modes: list[str]) -> dict[str, Any]:
    """LoCoMo as bench/locomo.py measures it with the shipped model, once per mode, on one ingest."""
    from bench import locomo

    data = json.loads(path.read_text())
    if conversations:
        data = data[:conversations]
    result: dict[str, Any] = {"path": str(path), "conversations": len(data)}
    with scratch_database("retrieval_locomo"):
        from memories.search import search_caches

        search_caches.reset()
        principals, known_ids, write_times = locomo.ingest(data, keep=False)
        questions: list[locomo.Question] = [
            (index, principals[index], qa, locomo.evidence_ids(qa.get("evidence", []), known_ids[index]))
            for index, sample in enumerate(data)
            for qa in sample["qa"]
            if qa.get("category") in locomo.CATEGORIES
        ]
        questions = [q for q in questions if q[3]]
        result["memories"] = sum(len(ids) for ids in known_ids)
        result["write_p50_ms"] = summary_ms(write_times)["p50"] if write_times else None
        for mode in modes:
            args = argparse.Namespace(  # one conversation has no other to be asked in: no rejection then
                mode=mode, top_k=LIMIT, vector_weight=None, keyword_weight=None, fusion=None, no_rejection=len(data) < 2
            )
            result[mode] = locomo.measure(args, questions, principals, None)
        search_caches.reset()
    return result


def report(sets: list[dict[str, Any]], locomo_result: dict[str, Any] | None, floor: float) -> None:
    rows = []
    for result in sets:
        for mode in MODES:
            s = result["modes"][mode]
            figures = [s["r_at_1"], s["mrr_at_10"], s["r_at_10"], s["false_floor"], s["foreign_rejection"]]
            rows.append([result["set"], mode, s["n"], *figures, s["search_ms"]["p50"]])
    header = ["set", "mode", "n", "R@1", "MRR@10", "R@10", "false floor", "foreign rej.", "p50 ms"]
    print_table(f"Retrieval, top {LIMIT} (R@k and MRR at min_score 0; floor and rejection at {floor})", header, rows)
    for result in sets:
        if result["refused_writes"]:
            print(f"  {result['set']}: {len(result['refused_writes'])} writes refused: {result['refused_writes']}")
    if locomo_result:
        rows = []
        for mode in MODES:
            if mode in locomo_result:
                m = locomo_result[mode]
                off, on = m["floor_off"]["overall"], m["floor_on"]["overall"]
                figures = [off["r_at_5"], off["r_at_10"], off["mrr"], on["r_at_10"], m.get("rejection", "")]
                rows.append([mode, off["n"], *figures, m["latency_ms"]["search_p50"]])
        header = ["mode", "n", "R@5", "R@10", "MRR@10", "R@10 floor", "rejection", "p50 ms"]
        title = f"LoCoMo ({locomo_result['conversations']} conversations, categories 1-4, shipped model)"
        print_table(title, header, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--faq-dev", default=None, help="The FAQ dev set (faq-dev.json), run first.")
    parser.add_argument(
        "--sets",
        nargs="*",
        default=[str(DATA / name) for name in DEFAULT_SETS],
        help="Dev sets to run (default: the ones in bench/data/; give none for only --faq-dev).",
    )
    parser.add_argument("--locomo", default=None, help="locomo-dev.json: also run LoCoMo (skipped without it).")
    parser.add_argument("--locomo-conversations", type=int, default=0, help="Only the first N conversations.")
    parser.add_argument("--locomo-modes", nargs="+", choices=MODES, default=["hybrid"], help="LoCoMo's modes.")
    parser.add_argument("--json", dest="json_out", default=None, help="Write the results here.")
    args = parser.parse_args()
    paths = [Path(p) for p in ([args.faq_dev] if args.faq_dev else []) + list(args.sets)]
    for path in [*paths, *([Path(args.locomo)] if args.locomo else [])]:
        if not path.exists():
            parser.error(f"{path}: no such file")

    sets = [run_set(path) for path in paths]
    locomo_result = run_locomo(Path(args.locomo), args.locomo_conversations, args.locomo_modes) if args.locomo else None

    from django.conf import settings

    report(sets, locomo_result, settings.SEARCH_MIN_SCORE)
    payload: dict[str, Any] = {
        "benchmark": "retrieval",
        "limit": LIMIT,
        "default_floor": settings.SEARCH_MIN_SCORE,
        "embedding": {"provider": settings.EMBEDDING_PROVIDER, "int8": settings.EMBEDDING_INT8},
        "statement_model": settings.SEARCH_STATEMENT_MODEL,
        "sets": sets,
    }
    if locomo_result is not None:
        payload["locomo"] = locomo_result
    write_json(args.json_out, payload)


if __name__ == "__main__":
    main()
