"""How much curated memories should outrank unreviewed ones (memories.search.fusion.review_prior).

Two sets, each in an organization of its own, searched through the service layer (hybrid, the real
model), then re-ranked offline under each candidate prior (the score is left alone; the order is
score times prior):

- conflicts (bench/data/rule_conflicts.json): each rule stored twice, the curated version (locked
  or verified) and an agent's contradicting variant (active), among neutral distractors; asked the
  way agents ask. Measured: how often the curated version comes first (a win), and R@1 of "the
  curated one answers".
- faq: the FAQ dev set (real questions and answers of two projects, given with --faq), each answer
  one memory, a tenth locked, a third verified, 30% active and the rest drafts, at random (seeded):
  review state carries no information about relevance there, so any change in R@1 / MRR@10 is the
  prior's cost.

A prior is kept when it wins the conflicts and costs the FAQ set nothing (within 0.5 points).
LoCoMo's memories are all unreviewed, so every prior leaves its order exactly as it is.

    .venv/bin/python bench/review_prior.py --faq ../shared/data/faq-dev/faq-dev.json \
        --json bench/results/$(date +%F)/review-prior.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, scratch_database, write_json

DATA = Path(__file__).resolve().parent / "data" / "rule_conflicts.json"
# (verified, active, draft); locked is 1
PRIORS = [
    (1.0, 1.0, 1.0), (1.0, 0.95, 0.9), (0.97, 0.9, 0.8), (0.95, 0.85, 0.7), (0.95, 0.8, 0.6), (0.9, 0.7, 0.5),
    (0.8, 0.5, 0.3),
]  # fmt: skip
DEPTH = 10


@dataclass
class Ranked:
    """One question's candidates: (memory id, score, status), and the ids that answer it."""

    hits: list[tuple[str, float, str]]
    answers: set[str]
    rival: str | None = None  # conflicts: the variant the curated rule must beat


Prior = tuple[float, float, float]


def prior_of(status: str, prior: Prior) -> float:
    verified, active, draft = prior
    return {"locked": 1.0, "verified": verified, "active": active}.get(status, draft)


def reranked(ranked: Ranked, prior: Prior) -> list[str]:
    order = sorted(ranked.hits, key=lambda hit: -hit[1] * prior_of(hit[2], prior))
    return [pk for pk, _, _ in order]


def metrics(questions: list[Ranked], prior: Prior) -> dict[str, float]:
    r1 = mrr = wins = 0.0
    for ranked in questions:
        order = reranked(ranked, prior)[:DEPTH]
        first = next((i for i, pk in enumerate(order) if pk in ranked.answers), None)
        r1 += first == 0
        mrr += 1 / (first + 1) if first is not None else 0.0
        if ranked.rival is not None:
            answer = next(iter(ranked.answers))
            position = {pk: i for i, pk in enumerate(order)}
            wins += position.get(answer, DEPTH) < position.get(ranked.rival, DEPTH)
    n = max(len(questions), 1)
    return {"r1": round(r1 / n, 4), "mrr10": round(mrr / n, 4), "curated_first": round(wins / n, 4)}


def _search(principal: Any, query: str) -> list[tuple[str, float, str]]:
    from memories.search import SearchParams, memory_search

    page = memory_search(principal, SearchParams(query=query, limit=50, min_score=0.0), counts_as_read=False)
    return [(str(hit.memory.pk), float(hit.score or 0.0), hit.memory.status) for hit in page.hits]


def _principals(slug: str) -> tuple[Any, Any]:
    from organizations.models import Role
    from organizations.principal import Principal
    from organizations.services import organization_create
    from organizations.tokens import principal_for_token, token_create

    organization = organization_create(slug=slug, name=slug, operator="bench")
    operator = Principal.for_operator(organization, "bench")
    agent = principal_for_token(token_create(principal=operator, role=Role.AGENT, name="bench-agent").raw)
    curator = principal_for_token(token_create(principal=operator, role=Role.CURATOR, name="bench-curator").raw)
    return agent, curator


def conflicts_set() -> list[Ranked]:
    from memories.services import memory_create

    data = json.loads(DATA.read_text())
    agent, curator = _principals("bench-conflicts")
    for text in data["distractors"]:
        memory_create(
            principal=curator,
            data={"scope_type": "organization", "memory_type": "fact", "current_content": text, "status": "verified"},
        )
    questions = []
    rng = random.Random(11)
    for pair in data["pairs"]:
        base = {"scope_type": "organization", "memory_type": pair["type"]}
        status = rng.choice(["locked", "verified"])
        curated, _ = memory_create(
            principal=curator, data={**base, "current_content": pair["curated"], "status": status}
        )
        variant, _ = memory_create(
            principal=curator, data={**base, "current_content": pair["variant"], "status": "active"}
        )
        questions.append((pair["question"], str(curated.pk), str(variant.pk)))
    return [Ranked(_search(agent, q), {curated}, rival=variant) for q, curated, variant in questions]


def faq_set(path: str, seed: int) -> list[Ranked]:
    from memories.services import memory_create

    data = json.loads(Path(path).read_text())
    rng = random.Random(seed)
    ranked = []
    for org, items in data["orgs"].items():
        agent, curator = _principals(f"bench-faq-{org}".lower().replace("_", "-"))
        ids = {}
        for item in items:
            roll = rng.random()
            status = "locked" if roll < 0.1 else "verified" if roll < 0.43 else "active" if roll < 0.73 else "draft"
            memory, _ = memory_create(
                principal=curator,
                data={"scope_type": "organization", "memory_type": "documentation", "current_content": item["content"],
                      "status": status},
            )  # fmt: skip
            ids[item["id"]] = str(memory.pk)
        for question in data["questions"]:
            if question["org"] == org:
                ranked.append(Ranked(_search(agent, question["question"]), {ids[question["answer"]]}))
    return ranked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--faq", required=True, help="faq-dev.json (see the data set's README)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    with scratch_database("review_prior"):
        from django.test import override_settings

        # Retrieved without any prior (it only reorders; the offline re-ranking applies each one).
        with override_settings(
            SEARCH_REVIEW_PRIOR_VERIFIED=1.0, SEARCH_REVIEW_PRIOR_ACTIVE=1.0, SEARCH_REVIEW_PRIOR_DRAFT=1.0
        ):
            conflicts = conflicts_set()
            faq = faq_set(args.faq, args.seed)
    rows, results = [], []
    for prior in PRIORS:
        c, f = metrics(conflicts, prior), metrics(faq, prior)
        results.append({"verified": prior[0], "active": prior[1], "draft": prior[2], "conflicts": c, "faq": f})
        rows.append([*prior, c["curated_first"], c["r1"], f["r1"], f["mrr10"]])
    print_table(
        f"review prior: {len(conflicts)} conflicting rule pairs, {len(faq)} FAQ questions (review state at random)",
        ["verified", "active", "draft", "conflicts: curated first", "conflicts R@1", "faq R@1", "faq MRR@10"],
        rows,
    )
    write_json(args.json_out, {"bench": "review_prior", "priors": results})


if __name__ == "__main__":
    main()
