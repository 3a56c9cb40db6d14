"""Consolidation quality and cost on a synthetic organization with planted duplicates.

One organization of ``--memories`` synthetic memories (the generator of bench/ingest.py, written by
an agent token), plus planted pairs, each a share of the corpus (``--plant``):

- exact duplicates: the same text with other case, white space and punctuation;
- paraphrases: the same statement reworded (synonyms swapped, a clause dropped or moved);
- near misses, which must never be merged: the same text with one number changed or another
  service named ("timeout is 30 s" against "timeout is 60 s"), and "swaps": another product or
  weekday named (PostgreSQL against MySQL, Friday against Monday).

Then a full consolidation run (the defaults: automatic merges for exact duplicates only), and:
precision of the automatic merges (a merge of anything but a planted duplicate counts against it),
recall of the planted duplicates (merged, or proposed to curators), near misses merged (must be 0),
a sweep of the near-duplicate threshold over the planted pairs (what "near" auto-merges would do),
an incremental run over ``--new`` new memories (a quarter of them duplicates), and the cost of the
write-time duplicate hint (the nearest-neighbour query a write adds).

    .venv/bin/python bench/consolidation.py --memories 10000 --json bench/results/$(date +%F)/consolidation-10k.json
"""

from __future__ import annotations

import argparse
import random
import re
import time
from dataclasses import dataclass
from typing import Any

from _common import percentile, print_table, scratch_database, summary_ms, write_json
from ingest import DATASTORES, FRAMEWORKS, OBSERVABILITY, QUEUES, WEEKDAYS, _memory, _Vocab

SYNONYMS = {
    "must": "has to", "should": "ought to", "uses": "relies on", "use": "rely on", "every": "each",
    "before": "prior to", "because": "since", "all": "every one of the", "only": "solely", "after": "once",
    "requires": "needs", "need": "require", "owns": "is responsible for", "runs": "executes", "keep": "retain",
    "through": "via", "about": "regarding", "new": "fresh", "large": "big", "quickly": "fast",
}  # fmt: skip


@dataclass(frozen=True)
class Planted:
    kind: str  # exact, paraphrase, near_miss
    original: int  # index into the base corpus
    text: str


def exact_variant(rng: random.Random, text: str) -> str:
    variant = text.upper() if rng.random() < 0.5 else text.lower()
    variant = variant.replace(", ", " , ").replace(". ", ".  ")
    return variant.rstrip(".") + rng.choice(["", "!", " ."])


def paraphrase(rng: random.Random, text: str) -> str | None:
    words = text.split()
    swaps = [i for i, word in enumerate(words) if word.lower().strip(",.") in SYNONYMS]
    if not swaps:
        return None
    for i in rng.sample(swaps, min(len(swaps), 3)):
        bare = words[i].lower().strip(",.")
        words[i] = words[i].lower().replace(bare, SYNONYMS[bare])
    sentences = re.split(r"(?<=\.) ", " ".join(words))
    if len(sentences) > 2 and rng.random() < 0.5:
        sentences = [*sentences[1:-1], sentences[0], sentences[-1]]  # move the lead sentence
    return " ".join(sentences)


def near_miss(rng: random.Random, text: str, services: list[str]) -> str | None:
    numbers = re.findall(r"\b\d+\b", text)
    if numbers:
        number = rng.choice(numbers)
        return re.sub(rf"\b{number}\b", str(int(number) * 2 + 1), text, count=1)
    named = [service for service in services if service in text]
    if named:
        other = rng.choice([s for s in services if s not in named])
        return text.replace(named[0], other, 1)
    return None


SWAPPABLE = [DATASTORES, QUEUES, FRAMEWORKS, OBSERVABILITY, WEEKDAYS]


def swap(rng: random.Random, text: str) -> str | None:
    for names in rng.sample(SWAPPABLE, len(SWAPPABLE)):
        present = [name for name in names if re.search(rf"\b{re.escape(name)}\b", text)]
        if present:
            return text.replace(present[0], rng.choice([n for n in names if n not in present]), 1)
    return None


def build(count: int, plant: float, seed: int) -> tuple[list[Any], list[Planted], _Vocab]:
    rng = random.Random(f"{seed}:consolidation")
    vocab = _Vocab(rng, count)
    seen: set[str] = set()
    subjects: set[tuple[Any, ...]] = set()
    base = [_memory(rng, vocab, seen, subjects) for _ in range(count)]
    planted: list[Planted] = []
    per_kind = max(1, round(count * plant))
    candidates = rng.sample(range(count), min(count, per_kind * 6))
    makers = {
        "exact": lambda t: exact_variant(rng, t),
        "paraphrase": lambda t: paraphrase(rng, t),
        "near_miss": lambda t: near_miss(rng, t, vocab.services),
        "swap": lambda t: swap(rng, t),
    }
    used: set[int] = set()
    for kind, make in makers.items():
        made = 0
        for index in candidates:
            if made == per_kind:
                break
            if index in used:
                continue
            text = make(base[index].text)
            if text and text != base[index].text:
                planted.append(Planted(kind, index, text))
                used.add(index)
                made += 1
    return base, planted, vocab


def entry(memory: Any, text: str | None = None) -> dict[str, Any]:
    """As an agent writes it: draft or active (curators' statuses are set afterwards, see ``review``)."""
    data = memory.entry()
    data["status"] = "active" if data["status"] in ("verified", "deprecated") else data["status"]
    if text is not None:
        data["current_content"] = text
    return data


def review(corpus: list[Any], ids: list[Any]) -> None:
    """The statuses curators gave part of the corpus (verified, deprecated), set in bulk."""
    from memories.models import Memory

    for status in ("verified", "deprecated"):
        Memory.objects.filter(pk__in=[ids[i] for i, m in enumerate(corpus) if m.status == status]).update(status=status)


def ingest(principal: Any, entries: list[dict[str, Any]]) -> list[Any]:
    from memories.batch import memory_batch_create

    ids = []
    for start in range(0, len(entries), 64):
        results = memory_batch_create(principal=principal, entries=entries[start : start + 64])
        for result in results:
            if not result.ok:
                raise RuntimeError(f"ingest refused an entry: {result.error}")
            ids.append(result.memory.pk)
    return ids


def agent(slug: str) -> Any:
    from organizations.principal import Principal
    from organizations.services import organization_create
    from organizations.tokens import principal_for_token, token_create

    organization = organization_create(slug=slug, name=slug, operator="bench")
    issued = token_create(principal=Principal.for_operator(organization, "bench"), role="agent", name="bench-agent")
    return principal_for_token(issued.raw)


def pair_outcomes(pairs: dict[str, list[tuple[Any, Any]]]) -> dict[str, dict[str, int]]:
    from lifecycle.models import ConsolidationProposal, ProposalKind, ProposalState
    from memories.models import Memory

    superseded = dict(Memory.objects.filter(superseded_by__isnull=False).values_list("pk", "superseded_by_id"))
    proposed: set[frozenset[Any]] = set()
    for ids in ConsolidationProposal.objects.filter(state=ProposalState.OPEN, kind=ProposalKind.MERGE).values_list(
        "memory_ids", flat=True
    ):
        proposed.add(frozenset(ids))
    outcome: dict[str, dict[str, int]] = {}
    for kind, kind_pairs in pairs.items():
        counts = {"pairs": len(kind_pairs), "merged": 0, "proposed": 0, "contradiction": 0}
        contradictions = {
            frozenset(ids)
            for ids in ConsolidationProposal.objects.filter(kind=ProposalKind.CONTRADICTION).values_list(
                "memory_ids", flat=True
            )
        }
        for a, b in kind_pairs:
            if superseded.get(a) == b or superseded.get(b) == a:
                counts["merged"] += 1
            elif frozenset((a, b)) in proposed:
                counts["proposed"] += 1
            elif frozenset((a, b)) in contradictions:
                counts["contradiction"] += 1
        outcome[kind] = counts
    return outcome


def automatic_precision(truth: set[frozenset[Any]]) -> dict[str, Any]:
    from lifecycle.models import ConsolidationProposal, ProposalState

    merged = [
        frozenset((survivor, member))
        for survivor, ids in ConsolidationProposal.objects.filter(state=ProposalState.APPLIED).values_list(
            "survivor_id", "memory_ids"
        )
        for member in ids
        if member != survivor
    ]
    correct = sum(1 for pair in merged if pair in truth)
    return {
        "merged_pairs": len(merged),
        "correct": correct,
        "precision": round(correct / len(merged), 4) if merged else None,
    }


def proposal_precision(truth: set[frozenset[Any]], kind: str) -> list[dict[str, Any]]:
    """Of the proposals of a kind a curator would see, how many are planted pairs, by similarity floor."""
    from lifecycle.models import ConsolidationProposal, ProposalState

    proposals = [
        (frozenset(ids), evidence.get("similarity", 0.0))
        for ids, evidence in ConsolidationProposal.objects.filter(state=ProposalState.OPEN, kind=kind).values_list(
            "memory_ids", "evidence"
        )
    ]
    rows = []
    for floor in (0.85, 0.88, 0.9, 0.92, 0.94, 0.95):
        kept = [ids for ids, similarity in proposals if similarity >= floor]
        planted = sum(1 for ids in kept if ids in truth)
        rows.append({"floor": floor, "proposals": len(kept), "planted": planted,
                     "precision": round(planted / len(kept), 3) if kept else None})  # fmt: skip
    return rows


def threshold_sweep(pairs: dict[str, list[tuple[Any, Any]]]) -> list[dict[str, Any]]:
    """What classification says of each planted pair at other near-duplicate thresholds."""
    from django.conf import settings
    from django.test.utils import override_settings

    from memories.models import Memory
    from memories.similarity import MatchKind, classify

    rows = []
    memories = {m.pk: m for m in Memory.objects.filter(pk__in={x for p in pairs.values() for pr in p for x in pr})}

    def cosine(a: Any, b: Any) -> float:
        va, vb = memories[a].embedding, memories[b].embedding
        return float(sum(x * y for x, y in zip(va, vb, strict=True)))

    similarities = {kind: [cosine(a, b) for a, b in kind_pairs] for kind, kind_pairs in pairs.items()}
    for threshold in (0.85, 0.9, 0.93, 0.95, 0.97, 0.99):
        with override_settings(
            CONSOLIDATION_NEAR_DUPLICATE=threshold, CONSOLIDATION_RELATED=settings.CONSOLIDATION_RELATED
        ):
            row: dict[str, Any] = {"near_threshold": threshold}
            for kind, kind_pairs in pairs.items():
                near = sum(
                    1
                    for (a, b), similarity in zip(kind_pairs, similarities[kind], strict=True)
                    if (match := classify(memories[a], memories[b], similarity)) and match.kind == MatchKind.DUPLICATE
                )
                row[f"{kind}_as_duplicate"] = near
            rows.append(row)
    for kind, values in similarities.items():
        rows.append({"similarity_of": kind, "p5": round(percentile(values, 0.05), 4),
                     "p50": round(percentile(values, 0.5), 4), "p95": round(percentile(values, 0.95), 4)})  # fmt: skip
    return rows


def hint_cost(ids: list[Any], sample: int) -> dict[str, float]:
    """What a single write adds for its possible_duplicates: the one nearest-neighbour statement."""
    from memories.hints import write_hints
    from memories.models import Memory

    timings = []
    for memory in Memory.objects.filter(pk__in=ids[:sample]):
        started = time.perf_counter()
        write_hints([memory])
        timings.append(time.perf_counter() - started)
    return summary_ms(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10000)
    parser.add_argument("--plant", type=float, default=0.02, help="Planted pairs of each kind, as a share.")
    parser.add_argument("--new", type=int, default=1000, help="Memories added before the incremental run.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="Keep the database (bench_consolidation).")
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()

    base, planted, _vocab = build(
        args.memories + args.new, args.plant * args.memories / (args.memories + args.new), args.seed
    )
    corpus, fresh = base[: args.memories], base[args.memories :]
    initial = [p for p in planted if p.original < args.memories]
    with scratch_database("consolidation", keep=args.keep):
        from lifecycle.consolidation import consolidation_run
        from organizations.models import Organization

        principal = agent("bench-consolidation")
        organization = Organization.objects.get(slug="bench-consolidation")
        started = time.perf_counter()
        ids = ingest(principal, [entry(m) for m in corpus])
        review(corpus, ids)
        planted_ids = ingest(principal, [entry(corpus[p.original], p.text) for p in initial])
        ingest_seconds = time.perf_counter() - started
        pairs: dict[str, list[tuple[Any, Any]]] = {"exact": [], "paraphrase": [], "near_miss": [], "swap": []}
        for plant, planted_id in zip(initial, planted_ids, strict=True):
            pairs[plant.kind].append((ids[plant.original], planted_id))

        started = time.perf_counter()
        run = consolidation_run(organization=organization, full=True, time_budget=7200)
        full_seconds = time.perf_counter() - started
        assert run is not None
        outcomes = pair_outcomes(pairs)
        truth = {frozenset(pair) for kind in ("exact", "paraphrase") for pair in pairs[kind]}
        precision = automatic_precision(truth)
        duplicates = outcomes["exact"]["pairs"] + outcomes["paraphrase"]["pairs"]
        found = sum(outcomes[k]["merged"] + outcomes[k]["proposed"] for k in ("exact", "paraphrase"))
        sweep = threshold_sweep(pairs)
        proposals = proposal_precision(truth, "merge")
        near_misses = {frozenset(pair) for kind in ("near_miss", "swap") for pair in pairs[kind]}
        contradictions = proposal_precision(near_misses, "contradiction")

        # Incremental: new memories, a quarter of them duplicates of what is there.
        rng = random.Random(f"{args.seed}:new")
        new_entries = [entry(m) for m in fresh[: args.new * 3 // 4]]
        new_entries += [entry(m, exact_variant(rng, m.text)) for m in rng.sample(corpus, args.new - len(new_entries))]
        new_ids = ingest(principal, new_entries)
        started = time.perf_counter()
        incremental = consolidation_run(organization=organization)
        incremental_seconds = time.perf_counter() - started
        assert incremental is not None
        hints = hint_cost(new_ids, 300)

    result = {
        "benchmark": "consolidation",
        "memories": args.memories,
        "planted": {kind: len(p) for kind, p in pairs.items()},
        "ingest_seconds": round(ingest_seconds, 1),
        "full_run": {"seconds": round(full_seconds, 1), **run.counts},
        "outcomes": outcomes,
        "automatic_merges": precision,
        "duplicate_recall": round(found / duplicates, 4) if duplicates else None,
        "near_misses_merged": outcomes["near_miss"]["merged"] + outcomes["swap"]["merged"],
        "threshold_sweep": sweep,
        "merge_proposals_by_floor": proposals,
        "contradiction_proposals_by_floor": contradictions,
        "incremental_run": {
            "new_memories": len(new_ids),
            "seconds": round(incremental_seconds, 2),
            **incremental.counts,
        },
        "write_hint_ms": hints,
    }
    print_table(
        f"Planted pairs in {args.memories} memories: what the full run did ({full_seconds:.1f} s)",
        ["kind", "pairs", "merged", "proposed", "contradiction"],
        [[k, v["pairs"], v["merged"], v["proposed"], v["contradiction"]] for k, v in outcomes.items()],
    )
    print(f"\n  full run: {run.counts}")
    print(f"  automatic merges: {precision}")
    print(f"  duplicate recall (merged or proposed): {result['duplicate_recall']}")
    print(f"  near misses merged: {result['near_misses_merged']}")
    print_table("Near-duplicate threshold sweep (planted pairs classified as duplicates)", list(sweep[0]),
                [list(row.values()) for row in sweep if "near_threshold" in row])  # fmt: skip
    for row in sweep:
        if "similarity_of" in row:
            print(f"  cosine of {row['similarity_of']:>10}: p5 {row['p5']}  p50 {row['p50']}  p95 {row['p95']}")
    print_table("Merge proposals by similarity floor (planted = a real duplicate)", list(proposals[0]),
                [list(row.values()) for row in proposals])  # fmt: skip
    print_table("Contradiction proposals by similarity floor (planted = a planted near miss)",
                list(contradictions[0]), [list(row.values()) for row in contradictions])  # fmt: skip
    print(f"\n  incremental run over {len(new_ids)} new memories: {incremental_seconds:.2f} s {incremental.counts}")
    print(f"  write-time hint (nearest query): {hints}")
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
