"""Fitting the ranking model and its calibration (memories.search.model) on LoCoMo, and measuring
them leave-one-conversation-out. Used by `bench/locomo.py --fit`; plain numpy, no network.

Data: every question's hybrid candidates (memory_search_candidates) with their features and labels
(evidence turns), in its own conversation and in each other one (where nothing is relevant); and
the single retrievers' candidates for the vector-only and keyword-only models.

1. Ranker: logistic regression of "evidence turn" on the features over every own-conversation
   candidate (each question weighs the same).
2. Calibration: logistic regression of the same label on (ranker sum, names_unknown) over
   each question's ten best candidates, own questions and questions asked of another conversation
   weighing the same in total.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

CALIBRATION_TOP = 10
L2 = 1e-4


@dataclass
class QueryData:
    conversation: int  # whose question
    searched: int  # whose memories
    category: int
    evidence: int  # how many evidence turns exist
    X: np.ndarray  # hybrid features, one row per candidate
    y: np.ndarray
    order_key: np.ndarray  # created_at in microseconds: the tie-break after the score
    names_unknown: float
    sim: np.ndarray = field(default_factory=lambda: np.zeros(0))  # vector candidates: similarity
    sim_y: np.ndarray = field(default_factory=lambda: np.zeros(0))
    kn: np.ndarray = field(default_factory=lambda: np.zeros(0))  # keyword candidates: coverage
    kn_y: np.ndarray = field(default_factory=lambda: np.zeros(0))


def fit_logistic(X: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float = L2) -> np.ndarray:
    """Weighted, L2-regularised logistic regression by Newton's method: coefficients, then the bias."""
    n, d = X.shape
    Xb = np.hstack([X, np.ones((n, 1))])
    w = w * (n / w.sum())
    penalty = l2 * n * np.diag(np.r_[np.ones(d), 0.0])
    beta = np.zeros(d + 1)
    for _ in range(100):
        p = 1 / (1 + np.exp(-(Xb @ beta)))
        gradient = Xb.T @ (w * (p - y)) + penalty @ beta
        hessian = (Xb * (w * p * (1 - p))[:, None]).T @ Xb + penalty
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-9:
            break
    return beta


def _ranker(queries: list[QueryData], attr: str = "X", label: str = "y") -> np.ndarray:
    Xs, ys, ws = [], [], []
    for q in queries:
        X = getattr(q, attr)
        if X.ndim == 1:
            X = X[:, None]
        if len(X) == 0:
            continue
        Xs.append(X)
        ys.append(getattr(q, label))
        ws.append(np.full(len(X), 1.0 / len(X)))
    return fit_logistic(np.vstack(Xs), np.concatenate(ys), np.concatenate(ws))


def _rank_values(beta: np.ndarray, X: np.ndarray) -> np.ndarray:
    if X.ndim == 1:
        X = X[:, None]
    return X @ beta[:-1] + beta[-1]


def _calibration(queries: list[QueryData], beta: np.ndarray, attr: str, label: str, query_level: bool) -> np.ndarray:
    Xs, ys, ws = [], [], []
    own = sum(1 for q in queries if q.conversation == q.searched)
    other = max(sum(1 for q in queries if q.conversation != q.searched), 1)
    for q in queries:
        values = _rank_values(beta, getattr(q, attr))
        if len(values) == 0:
            continue
        top = np.argsort(-values, kind="stable")[:CALIBRATION_TOP]
        columns = [values[top]]
        if query_level:
            columns.append(np.full(len(top), q.names_unknown))
        Xs.append(np.stack(columns, 1))
        ys.append(getattr(q, label)[top])
        weight = 1.0 if q.conversation == q.searched else own / other
        ws.append(np.full(len(top), weight / len(top)))
    return fit_logistic(np.vstack(Xs), np.concatenate(ys), np.concatenate(ws))


def fit(queries: list[QueryData], names: list[str]) -> dict[str, Any]:
    """The three models' numbers, as memories.search.model.Model.from_numbers takes them."""
    from memories.search.model import Model

    own = [q for q in queries if q.conversation == q.searched]
    hybrid = _ranker(own)
    hybrid_cal = _calibration(queries, hybrid, "X", "y", query_level=True)
    vector = _ranker(own, "sim", "sim_y")
    vector_cal = _calibration(queries, vector, "sim", "sim_y", query_level=False)
    keyword = _ranker(own, "kn", "kn_y")
    keyword_cal = _calibration(queries, keyword, "kn", "kn_y", query_level=True)
    return {
        "hybrid": Model.from_numbers(names, hybrid, list(hybrid_cal)),
        "vector": Model.from_numbers(["similarity"], vector, [vector_cal[0], 0.0, vector_cal[1]]),
        "keyword": Model.from_numbers(["keyword"], keyword, list(keyword_cal)),
    }


def scores(model: Any, q: QueryData, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Rank values and calibrated scores of a query's hybrid candidates under ``model``."""
    weights = np.array([model.weights.get(name, 0.0) for name in names])
    values = q.X @ weights + model.bias
    z = model.scale * values + model.names_unknown * q.names_unknown + model.offset
    return values, 1 / (1 + np.exp(-z))


def offline_recall(
    models_by_fold: dict[int, Any], queries: list[QueryData], names: list[str], floors: list[float], k: int = 10
) -> dict[str, Any]:
    """R@k per floor (own questions) and the share of questions asked of another conversation that
    return nothing above each floor, each question scored by the model of its fold."""
    found: dict[float, list[float]] = defaultdict(list)
    empty: dict[float, list[bool]] = defaultdict(list)
    kept: dict[float, list[int]] = defaultdict(list)
    right: dict[float, list[float]] = defaultdict(list)
    for q in queries:
        model = models_by_fold[q.conversation]["hybrid"]
        values, p = scores(model, q, names)
        if q.conversation != q.searched:
            for floor in floors:
                empty[floor].append(bool((p < floor).all()))
            continue
        order = np.lexsort((-q.order_key, -values))[:k]
        for floor in floors:
            above = [i for i in order if p[i] >= floor]
            found[floor].append(sum(q.y[i] for i in above) / q.evidence)
            kept[floor].append(len(above))
            right.setdefault(floor, []).extend(q.y[i] for i in above)
    return {
        floor: {
            "r_at_k": round(float(np.mean(found[floor])), 4),
            "rejected": round(float(np.mean(empty[floor])), 4) if empty[floor] else None,
            "results": round(float(np.mean(kept[floor])), 2),
            "precision": round(float(np.mean(right[floor])), 4) if right[floor] else None,
        }
        for floor in floors
    }
