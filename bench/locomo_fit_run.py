"""`bench/locomo.py --fit` and `--loco`: collect the candidates' features through the service layer,
fit the models per fold (bench/locomo_fit.py) and on everything, sweep the floor, print the result."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np

from bench.locomo_fit import QueryData, fit, offline_recall
from bench.locomo_fit_report import report

Question = tuple[int, Any, dict[str, Any], set[str]]


def _micros(moment: Any) -> int:
    from memories.search.params import micros

    return micros(moment)


def collect(questions: list[Question], principals: list[Any]) -> list[QueryData]:
    """Every question searched in its own organization and in each other one, as candidates with features."""
    from tqdm import tqdm

    from memories.models import Memory
    from memories.search import SearchParams
    from memories.search.model import FEATURES
    from memories.search.pipeline import memory_search_candidates

    dia = [
        dict(Memory.objects.filter(organization=p.organization).values_list("pk", "metadata__dia_id"))
        for p in principals
    ]
    queries = []
    for conversation, _, qa, evidence in tqdm(questions, desc="features", unit="q", file=sys.stderr):
        for searched, principal in enumerate(principals):
            params = SearchParams.build(query=qa["question"], mode="hybrid", limit=10, min_score=0)
            candidates, retrieved = memory_search_candidates(principal, params)
            own = searched == conversation

            def label(pk: Any, own: bool = own, searched: int = searched, evidence: set[str] = evidence) -> float:
                return 1.0 if own and dia[searched].get(pk) in evidence else 0.0

            terms = retrieved.terms
            assert terms is not None
            mass = terms.mass or 1.0
            queries.append(
                QueryData(
                    conversation=conversation,
                    searched=searched,
                    category=qa["category"],
                    evidence=len(evidence),
                    X=np.array([[getattr(c.features, name) for name in FEATURES] for c in candidates]),
                    y=np.array([label(c.pk) for c in candidates]),
                    order_key=np.array([_micros(c.created_at) for c in candidates], dtype=np.float64),
                    names_unknown=terms.names_unknown,
                    sim=np.array([c.similarity or 0.0 for c in retrieved.vector_hits]),
                    sim_y=np.array([label(c.pk) for c in retrieved.vector_hits]),
                    kn=np.array([(c.keyword or 0.0) / mass for c in retrieved.keyword_hits]),
                    kn_y=np.array([label(c.pk) for c in retrieved.keyword_hits]),
                )
            )
    return queries


def _folds(queries: list[QueryData], conversations: int) -> dict[int, dict[str, Any]]:
    from memories.search.model import FEATURES

    return {
        held: fit([q for q in queries if held not in (q.conversation, q.searched)], list(FEATURES))
        for held in range(conversations)
    }


def _queries(args: Any, questions: list[Question], principals: list[Any]) -> list[QueryData]:
    """The candidates' features: collected, or read from --features-cache when it exists (and kept there)."""
    cache = Path(args.features_cache) if args.features_cache else None
    if cache is not None and cache.exists():
        with cache.open("rb") as file:
            queries: list[QueryData] = pickle.load(file)  # noqa: S301 - a file this command wrote
        return queries
    queries = collect(questions, principals)
    if cache is not None:
        with cache.open("wb") as file:
            pickle.dump(queries, file)
    return queries


def fit_folds(args: Any, questions: list[Question], principals: list[Any]) -> dict[int, dict[str, Any]]:
    return _folds(_queries(args, questions, principals), len(principals))


def fit_and_report(
    args: Any, questions: list[Question], principals: list[Any], data: list[dict[str, Any]]
) -> tuple[dict[int, dict[str, Any]], dict[str, Any]]:
    from bench.locomo import FLOORS
    from memories.search.model import FEATURES

    queries = _queries(args, questions, principals)
    folds = _folds(queries, len(principals))
    sweep = offline_recall(folds, queries, list(FEATURES), FLOORS)
    final = fit(queries, list(FEATURES))
    return folds, report(folds, final, sweep, queries)
