"""The ranking models and their calibration: every search result's ``score`` in [0, 1].

The score is the estimated probability that the memory is relevant to the query: one of the
memories a person would need to answer it. Hybrid search scores a memory by one of two models,
each a ranker and its calibration, by what kind of memory it is:

- a turn of a conversation (written in a session, ``source.session``) by ``HYBRID``, fitted on
  LoCoMo's chat transcripts (bench/locomo.py --fit), where the words and the turns around it count;
- any other memory (a rule, decision, fact, answer: a statement that stands alone) by
  ``STATEMENT``, fitted on the dev sets of real questions and answers and of agents' questions about
  an organization's rules (bench/retrieval_fit.py), where meaning counts most.

One model fitted on both kinds lost on each (held out: LoCoMo R@10 0.750 -> 0.715 and its rejection
of other conversations' questions 0.93 -> 0.35; bench/results/2026-11-27/retrieval-fit.json). Both
models' scores are calibrated probabilities, so one scale orders an organization holding both.

``HYBRID``, two logistic regressions, leave-one-conversation-out when measured:

1. The ranker: a weighted sum of absolute features (params.Features) — cosine similarity, the share
   of the query's words (by IDF) the memory holds, the best of the same two in its session context,
   and time (it says when, for a "when" question; it dates from the day, month or year the query
   names). Absolute, not scaled per query: a memory
   scores the same in an organization of ten memories or of a million, and a query nothing matches
   scores low everywhere.
2. The calibration: the ranker's sum, and how much of the query the organization has never heard
   of (the share of its names no memory mentions), mapped through a logistic function. Fitted on
   each query's ten best candidates, for questions asked both in their own conversation and in
   another one (where nothing is relevant, in equal number), so a score reads as "this share of
   memories scoring this high were relevant".

``STATEMENT`` weighs similarity and keyword coverage (its sets have no sessions, and their questions
do not ask when: the two time features keep ``HYBRID``'s weights), its ranker fitted listwise (the
softmax over each question's candidates, to put the answer first), its calibration on the ranker's
sum alone, over the statement sets, each weighing the same.

Within a query the calibration only shifts and stretches the ranker's sum, so the score orders the
results exactly as the ranker does. Vector-only and keyword-only searches have their own
one-feature models (similarity; keyword coverage), calibrated the same way.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, fields

from memories.search.params import Features

FEATURES = tuple(field.name for field in fields(Features))


@dataclass(frozen=True)
class Model:
    """``weights`` by feature name (missing ones weigh 0), then the calibration of their sum."""

    weights: dict[str, float]
    bias: float
    scale: float  # calibration: the ranker's sum counts this much
    names_unknown: float  # ... the share of the query's names no memory of the organization mentions, this much
    offset: float

    def rank_value(self, features: Features, *, vector_factor: float = 1.0, keyword_factor: float = 1.0) -> float:
        """The ranker's weighted sum. The factors re-weigh meaning and words (a caller's own weights)."""
        total = self.bias
        for name, weight in self.weights.items():
            factor = vector_factor if "similarity" in name else keyword_factor if "keyword" in name else 1.0
            total += weight * factor * getattr(features, name)
        return total

    def score(self, rank_value: float, *, names_unknown: float = 0.0) -> float:
        z = self.scale * rank_value + self.names_unknown * names_unknown + self.offset
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    @classmethod
    def from_numbers(cls, names: Sequence[str], ranker: Sequence[float], calibration: Sequence[float]) -> Model:
        """From fitted coefficients: the ranker's (one per name, then the bias) and the calibration's
        (scale, names_unknown, offset)."""
        *weights, bias = ranker
        scale, names_unknown, offset = calibration
        return cls(dict(zip(names, weights, strict=True)), bias, scale, names_unknown, offset)


# Fitted by `bench/locomo.py --fit` on the LoCoMo dev split (all five conversations; each fold's
# coefficients, fitted without one conversation, stay within about 0.2 of these).
HYBRID = Model(
    weights={
        "similarity": 2.8048,
        "keyword": 2.2464,
        "context_similarity": 1.4501,
        "context_keyword": 2.3244,
        "states_time": 0.9351,
        "in_span": 1.6288,
    },
    bias=-7.9268,
    scale=0.6692,
    names_unknown=-2.6248,
    offset=-0.0145,
)
VECTOR = Model(
    weights={"similarity": 5.6934},
    bias=-7.0028,
    scale=1.6995,
    names_unknown=0.0,
    offset=3.5429,
)
KEYWORD = Model(
    weights={"keyword": 5.0871},
    bias=-5.5789,
    scale=0.6718,
    names_unknown=-2.4454,
    offset=-0.3651,
)


# Fitted by `bench/retrieval_fit.py` on the four statement sets (its chosen method, st-two-listwise-plain:
# the query's unknown names did not help its calibration there, so they weigh nothing). Those sets ask
# no question about time, so the time features keep the conversation model's weights: both rankers'
# weights are log-odds, and a memory from the month a query names is as much likelier either way.
STATEMENT = Model(
    weights={
        "similarity": 15.6763,
        "keyword": 2.758,
        "states_time": HYBRID.weights["states_time"],
        "in_span": HYBRID.weights["in_span"],
    },
    bias=-6.4394,
    scale=0.569,
    names_unknown=0.0,
    offset=-3.0197,
)


@dataclass
class Models:
    hybrid: Model = HYBRID
    statement: Model = STATEMENT
    vector: Model = VECTOR
    keyword: Model = KEYWORD


models = Models()


@contextmanager
def swapped(holder: object, **replacements: Model | None) -> Iterator[None]:
    """``holder``'s models named in ``replacements`` (those not None) replaced for a while."""
    given = {name: model for name, model in replacements.items() if model is not None}
    saved = {name: getattr(holder, name) for name in given}
    for name, model in given.items():
        setattr(holder, name, model)
    try:
        yield
    finally:
        for name, model in saved.items():
            setattr(holder, name, model)


def using(
    *,
    hybrid: Model | None = None,
    statement: Model | None = None,
    vector: Model | None = None,
    keyword: Model | None = None,
) -> AbstractContextManager[None]:
    """Search with other models for a while (the benchmark's leave-one-conversation-out runs)."""
    return swapped(models, hybrid=hybrid, statement=statement, vector=vector, keyword=keyword)
