"""Code search's ranking models: a code search result's ``score`` is, like a memory's
(memories.search.model), the estimated probability that it is relevant — that it is the code the
query describes.

Each is a memories.search.model.Model: a ranker's weights over code_index.ranking's features, then
the calibration of their sum (``names_unknown`` unused: 0). Reproduced by

    python bench/code_search_fit.py --fit-on django.db --validate-on kombu \\
        --json bench/results/2026-11-27/code-search-fit.json

which indexes both packages' source with their docstrings removed, makes a query of each documented
function's docstring (it hits when a result covers the function's ``def`` line), fits on django.db
and measures on kombu. ``HYBRID`` is its chosen method, ``words-listwise``: the softmax over each
query's candidates of similarity, keyword coverage and the query's words in the chunk's name, its
container and its path (whether the chunk is a function or a method did not help), calibrated by
logistic regression of "relevant" on the ranker's sum over each query's ten best, django.db's own
questions and kombu's asked of django.db (where nothing answers them) weighing the same. Held out
on kombu: MRR@10 0.525 against the legacy fusion's 0.493, R@1 0.400 against 0.357, R@10 0.763
against 0.757; a quarter of kombu's questions asked of django.db left with nothing at the floor
(0.01), and 0.3% of hits dropped by it.

Scores run low because a query has one answer among many look-alikes: a clear match scores about
0.05 to 0.5, a query nothing answers under 0.01. ``VECTOR`` and ``KEYWORD`` are the one-feature
models of vector-only and keyword-only search, fitted and calibrated the same way; they order exactly
as similarity and BM25 do.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass

from memories.search.model import Model, swapped

HYBRID = Model(
    weights={"similarity": 15.2877, "keyword": 4.3268, "name": 6.9915, "container": 3.8577, "path": 2.6027},
    bias=-7.6397,
    scale=0.2645,
    names_unknown=0.0,
    offset=-4.0917,
)
VECTOR = Model(weights={"similarity": 6.7163}, bias=-7.2004, scale=1.5058, names_unknown=0.0, offset=2.5803)
KEYWORD = Model(weights={"keyword": 1.9851}, bias=-5.5131, scale=1.0069, names_unknown=0.0, offset=0.5892)


@dataclass
class Models:
    hybrid: Model = HYBRID
    vector: Model = VECTOR
    keyword: Model = KEYWORD


models = Models()


def using(
    *, hybrid: Model | None = None, vector: Model | None = None, keyword: Model | None = None
) -> AbstractContextManager[None]:
    """Search with other models for a while (bench/code_search_fit.py runs its fit through the live search)."""
    return swapped(models, hybrid=hybrid, vector=vector, keyword=keyword)
