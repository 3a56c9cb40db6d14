"""Candidate rankers and calibrations, fitted on some dev sets and measured on another (offline, on
the candidates bench/retrieval_collect.py collected). Plain numpy.

A *method* is a feature map (the model's features, plus any derived from a candidate's place among
the query's candidates), a way to fit the ranker (pointwise: logistic regression of "relevant" on
the features; listwise: the softmax of the ranker's values over each query's candidates, fitted to
put its relevant ones first), and the calibration's query-level inputs. Every set weighs the same in
a fit, and within a set every question.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.locomo_fit import fit_logistic
from bench.retrieval_collect import Asked

Ranker = Callable[[Asked], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
CALIBRATION_TOP = 10
LIMIT = 10
BASE = ("similarity", "keyword", "context_similarity", "context_keyword", "states_time", "in_span")


def live(a: Asked) -> np.ndarray:
    """The candidates the live search scores: the first pass's pool and the neighbours it brought."""
    return a.in_pool | ((a.vector_rank == 0) & (a.keyword_rank == 0))


def derived(a: Asked, names: Sequence[str]) -> np.ndarray:
    """The feature matrix of ``a``'s live candidates: model features by name, and derived ones."""
    keep = live(a)
    X, columns = a.X[keep], []
    sim = X[:, 0]
    kw = X[:, 1] if X.shape[1] > 1 else np.zeros(len(X))
    # Another search's features (bench/code_search_fit.py's) name their own columns; similarity and
    # keyword coverage come first there too.
    named: tuple[str, ...] = getattr(a, "columns", BASE)
    for name in names:
        if name in named:
            columns.append(X[:, named.index(name)])
        elif name == "sim_gap":  # how far under the query's best similarity
            columns.append(sim - sim.max(initial=0.0))
        elif name == "kw_gap":
            columns.append(kw - kw.max(initial=0.0))
        elif name == "sim_x_kw":
            columns.append(sim * kw)
        elif name == "rrf_vector":
            rank = a.vector_rank[keep]
            columns.append(np.where(rank > 0, 10.0 / (10 + rank), 0.0))
        elif name == "rrf_keyword":
            rank = a.keyword_rank[keep]
            columns.append(np.where(rank > 0, 10.0 / (10 + rank), 0.0))
        elif name == "sim_sq":
            columns.append(sim**2)
        elif name == "names_shared":  # the memory-entity graph: the query's names the memory mentions
            columns.append(a.names_shared[keep] if len(a.names_shared) else np.zeros(len(X)))
        elif name in ("names_noabbr", "names_rare"):
            variant = getattr(a, "names_variants", {}).get(name)
            columns.append(variant[keep] if variant is not None and len(variant) else np.zeros(len(X)))
        else:
            raise KeyError(name)
    return np.stack(columns, 1) if columns else np.zeros((int(keep.sum()), 0))


def query_level(a: Asked, names: Sequence[str]) -> np.ndarray:
    """The calibration's inputs that are the same for every candidate of a query."""
    values = []
    for name in names:
        if name == "names_unknown":
            values.append(a.names_unknown)
        elif name == "best_similarity":
            values.append(float(a.X[:, 0].max(initial=0.0)))
        else:
            raise KeyError(name)
    return np.array(values)


def _group_weights(asked: Sequence[Asked]) -> dict[str, float]:
    counts: dict[str, int] = {}
    for a in asked:
        if a.own:
            counts[a.group] = counts.get(a.group, 0) + 1
    return {group: 1.0 / n for group, n in counts.items()}


def fit_pointwise(asked: Sequence[Asked], names: Sequence[str], l2: float) -> np.ndarray:
    weights = _group_weights(asked)
    Xs, ys, ws = [], [], []
    for a in asked:
        if not a.own:
            continue
        X = derived(a, names)
        if len(X) == 0:
            continue
        Xs.append(X)
        ys.append(a.y[live(a)])
        ws.append(np.full(len(X), weights[a.group] / len(X)))
    return fit_logistic(np.vstack(Xs), np.concatenate(ys), np.concatenate(ws), l2=l2)


def fit_listwise(asked: Sequence[Asked], names: Sequence[str], l2: float, start: np.ndarray) -> np.ndarray:
    """The softmax over each query's candidates, maximising the probability of its relevant ones
    (their mean log-probability), by Newton steps; the bias is the pointwise fit's (a softmax cannot
    see it)."""
    weights = _group_weights(asked)
    data = []
    for a in asked:
        y = a.y[live(a)]
        if a.own and y.sum() > 0:
            data.append((derived(a, names), y / y.sum(), weights[a.group]))
    total = sum(w for _, _, w in data)
    beta = start[:-1].copy()
    d = len(beta)
    for _ in range(50):
        gradient = l2 * beta * total
        hessian = l2 * np.eye(d) * total
        for X, target, w in data:
            z = X @ beta
            p = np.exp(z - z.max())
            p /= p.sum()
            mean = p @ X
            gradient += w * (mean - target @ X)
            centred = X - mean
            hessian += w * (centred * p[:, None]).T @ centred
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-7:
            break
    return np.r_[beta, start[-1]]


def fit_calibration(
    asked: Sequence[Asked], names: Sequence[str], beta: np.ndarray, query_names: Sequence[str]
) -> np.ndarray:
    """Logistic regression of "relevant" on (ranker value, the query-level inputs) over each query's
    ten best, questions asked elsewhere weighing as much as own ones, every set the same."""
    weights = _group_weights(asked)
    own = {g: sum(1 for a in asked if a.own and a.group == g) for g in weights}
    other = {g: max(sum(1 for a in asked if not a.own and a.group == g), 1) for g in weights}
    Xs, ys, ws = [], [], []
    for a in asked:
        values = derived(a, names) @ beta[:-1] + beta[-1]
        if len(values) == 0:
            continue
        top = np.argsort(-values, kind="stable")[:CALIBRATION_TOP]
        q = query_level(a, query_names)
        Xs.append(np.hstack([values[top][:, None], np.tile(q, (len(top), 1))]))
        ys.append(a.y[live(a)][top])
        weight = weights[a.group] * (1.0 if a.own else own[a.group] / other[a.group])
        ws.append(np.full(len(top), weight / len(top)))
    return fit_logistic(np.vstack(Xs), np.concatenate(ys), np.concatenate(ws))


@dataclass(frozen=True)
class Method:
    name: str
    features: tuple[str, ...] = BASE
    listwise: bool = False
    l2: float = 1e-4
    calibration: tuple[str, ...] = ("names_unknown",)
    documents: bool = False  # fitted on the sets of standalone statements only (not LoCoMo's chat turns)

    def describe(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "ranker": "listwise" if self.listwise else "pointwise",
            "l2": self.l2,
            "calibration": list(self.calibration),
            "fitted_on": "statement sets (not LoCoMo)" if self.documents else "every set",
        }

    def fit(self, asked: Sequence[Asked]) -> Fitted:
        beta = fit_pointwise(asked, self.features, self.l2)
        if self.listwise:
            beta = fit_listwise(asked, self.features, self.l2, beta)
        calibration = fit_calibration(asked, self.features, beta, beta_names := self.calibration)
        return Fitted(self, beta, calibration, beta_names)


@dataclass(frozen=True)
class Fitted:
    method: Method
    beta: np.ndarray
    calibration: np.ndarray
    query_names: tuple[str, ...]

    def values_scores(self, a: Asked) -> tuple[np.ndarray, np.ndarray]:
        values = derived(a, self.method.features) @ self.beta[:-1] + self.beta[-1]
        q = query_level(a, self.query_names)
        z = self.calibration[0] * values + (self.calibration[1:-1] @ q if len(q) else 0.0) + self.calibration[-1]
        return values, 1 / (1 + np.exp(-z))


def measure(
    asked: Sequence[Asked],
    ranker: Callable[[Asked], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
    floor: float,
) -> dict[str, Any]:
    """R@1, MRR@10, R@10 (the share of a question's relevant memories in its top 10), false floor
    and foreign rejection of one set's questions; ``ranker`` gives a search's values, scores, labels
    and tie-break keys."""
    r1, mrr, r10, floored, rejected = [], [], [], [], []
    for a in asked:
        values, scores, y, order_key = ranker(a)
        if not a.own:
            rejected.append(bool((scores < floor).all()))
            continue
        order = np.lexsort((-order_key, -values))[:LIMIT]
        hits = [i for i in order if y[i] > 0]
        r1.append(1.0 if len(order) and y[order[0]] > 0 else 0.0)
        first = next((rank for rank, i in enumerate(order, 1) if y[i] > 0), None)
        mrr.append(1 / first if first else 0.0)
        r10.append(len(hits) / max(a.relevant, 1))
        floored.append(bool(hits) and all(scores[i] < floor for i in hits))
    return {
        "n": len(r1),
        "r_at_1": round(float(np.mean(r1)), 4),
        "mrr_at_10": round(float(np.mean(mrr)), 4),
        "r_at_10": round(float(np.mean(r10)), 4),
        "false_floor": round(float(np.mean(floored)), 4),
        "foreign_rejection": round(float(np.mean(rejected)), 4) if rejected else None,
    }


def model_ranker(fitted: Fitted) -> Ranker:
    def rank(a: Asked) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        values, scores = fitted.values_scores(a)
        keep = live(a)
        return values, scores, a.y[keep], a.order_key[keep]

    return rank


def single_ranker(attr: str, model: Any) -> Ranker:
    """A single retriever's own order (similarity or keyword coverage) and its shipped calibration."""

    def rank(a: Asked) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        x = getattr(a, attr)
        y = getattr(a, attr + "_y") if attr == "sim" else a.kn_y
        value = model.weights[next(iter(model.weights))] * x + model.bias
        z = model.scale * value + model.names_unknown * (a.names_unknown if attr == "kn" else 0.0) + model.offset
        return x, 1 / (1 + np.exp(-z)), y, -np.arange(len(x), dtype=float)

    return rank


GAPS = (*BASE, "sim_gap", "kw_gap")
TWO = ("similarity", "keyword")
# Every method tried. Fitted on every set (LoCoMo too), they lose LoCoMo (its chat turns want words and
# context, the statements of the FAQ and agent sets want meaning) and its rejection (names); fitted
# on the statement sets alone, they serve memories written outside a conversation, and LoCoMo's
# model the turns of one.
METHODS = (
    Method("all-pointwise"),
    Method("all-listwise", listwise=True),
    Method("all-gaps", features=GAPS),
    Method("all-gaps-listwise", features=GAPS, listwise=True),
    Method("all-gaps-rrf-listwise", features=(*GAPS, "rrf_vector", "rrf_keyword"), listwise=True),
    Method("all-gaps-best", features=GAPS, listwise=True, calibration=("names_unknown", "best_similarity")),
    Method("st-pointwise", documents=True),
    Method("st-listwise", listwise=True, documents=True),
    Method("st-two", features=TWO, documents=True),
    Method("st-two-listwise", features=TWO, listwise=True, documents=True),
    Method("st-two-listwise-plain", features=TWO, listwise=True, documents=True, calibration=()),
    Method("st-two-l2", features=TWO, documents=True, l2=1e-2),
    Method("st-gaps-listwise", features=GAPS, listwise=True, documents=True),
    Method("st-squares", features=(*TWO, "sim_sq", "sim_x_kw"), documents=True),
    # The memory-entity graph one step from the query (knowledge.mentions) as a feature.
    Method("all-gaps-names-listwise", features=(*GAPS, "names_shared"), listwise=True),
    Method(
        "st-two-names-listwise-plain", features=(*TWO, "names_shared"), listwise=True, documents=True, calibration=()
    ),
    Method(
        "st-two-noabbr-listwise-plain", features=(*TWO, "names_noabbr"), listwise=True, documents=True, calibration=()
    ),
    Method("st-two-rare-listwise-plain", features=(*TWO, "names_rare"), listwise=True, documents=True, calibration=()),
)
CHOSEN = next(m for m in METHODS if m.name == "st-two-listwise-plain")


def model_numbers(fitted: Fitted) -> dict[str, Any]:
    """A fit as memories.search.model.Model's fields."""
    *weights, bias = (round(float(v), 4) for v in fitted.beta)
    scale, *query, offset = (round(float(v), 4) for v in fitted.calibration)
    return {
        "weights": dict(zip(fitted.method.features, weights, strict=True)),
        "bias": bias,
        "scale": scale,
        **dict(zip(fitted.query_names, query, strict=True)),
        "offset": offset,
    }


def _fitted(model: Any) -> Fitted:
    beta = np.array([model.weights.get(name, 0.0) for name in BASE] + [model.bias])
    calibration = np.array([model.scale, model.names_unknown, model.offset])
    return Fitted(Method("shipped"), beta, calibration, ("names_unknown",))


def shipped_ranker() -> Ranker:
    """The shipped models as the live search applies them: a turn of a conversation session by the
    hybrid model, any other memory by the statement model."""
    from memories.search.model import models

    turns, statements = _fitted(models.hybrid), _fitted(models.statement)

    def rank(a: Asked) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        keep = live(a)
        session = a.in_session[keep]
        # One scale for both: the calibrated score orders a mixed organization's results.
        score = np.where(session, turns.values_scores(a)[1], statements.values_scores(a)[1])
        return score, score, a.y[keep], a.order_key[keep]

    return rank
