"""The candidates of every dev set's questions, with their features and labels: what the ranking
model is fitted on across sets (bench/retrieval_fit.py).

Each set is stored as bench/retrieval.py stores it (FAQ-format sets) or as bench/locomo.py does
(LoCoMo), in a scratch database of its own; every question is then searched, through the service
layer (``memory_search_candidates``), in its own organization (labels: its answer, its evidence
turns) and in each other organization of its set (where nothing is relevant).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from bench._common import scratch_database


@dataclass
class Asked:
    """One question searched in one organization: every candidate, its features and label."""

    group: str  # the dev set
    org: int  # whose question (an index unique across sets)
    searched: int  # whose memories
    kind: str  # LoCoMo's category or the set's "kind"; "" when it has none
    relevant: int  # how many relevant memories exist (0 when asked elsewhere)
    X: np.ndarray  # the model's features (memories.search.model.FEATURES), one row per candidate
    y: np.ndarray
    order_key: np.ndarray  # created_at in microseconds: the tie-break after the score
    in_session: np.ndarray  # written in a conversation session (source.session)
    in_pool: np.ndarray  # among the first pass's SEARCH_RERANK_POOL best (what the live model scores)
    vector_rank: np.ndarray  # 1-based rank by the vector retriever (0: it did not find it)
    keyword_rank: np.ndarray
    names_unknown: float
    query: str = ""
    sim: np.ndarray = field(default_factory=lambda: np.zeros(0))  # vector retriever alone
    sim_y: np.ndarray = field(default_factory=lambda: np.zeros(0))
    kn: np.ndarray = field(default_factory=lambda: np.zeros(0))  # keyword retriever alone
    kn_y: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # The share of the names the query mentions that each candidate mentions (knowledge.mentions:
    # the memory-entity graph one step from the query); empty in candidates collected before it.
    names_shared: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # Variants of it: without the built-in abbreviations (search expands those already), and each
    # name weighed by its rarity in the organization (log N/df).
    names_variants: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def own(self) -> bool:
        return self.org == self.searched


def _candidates(principal: Any, query: str) -> tuple[list[Any], Any, set[Any]]:
    from django.conf import settings

    from memories.search import SearchParams
    from memories.search.fusion import fuse
    from memories.search.params import Fusion
    from memories.search.pipeline import memory_search_candidates

    params = SearchParams.build(query=query, mode="hybrid", limit=10, min_score=0)
    candidates, retrieved = memory_search_candidates(principal, params)
    first, _ = fuse(
        retrieved.vector_hits,
        retrieved.keyword_hits,
        replace(params, fusion=Fusion.SCORE),
        scales=None,
        clamp=True,
        keyword_floor=retrieved.keyword_floor,
    )
    return candidates, retrieved, {c.pk for c in first[: int(settings.SEARCH_RERANK_POOL)]}


@dataclass(frozen=True)
class Question:
    """Who asks what, of whom: the organizations as indexes unique across sets."""

    group: str
    org: int
    searched: int
    kind: str
    query: str
    relevant: int  # how many memories answer it in its own organization


def ask(question: Question, principal: Any, label: Any) -> Asked:
    from memories.search.model import FEATURES
    from memories.search.params import micros

    candidates, retrieved, pool = _candidates(principal, question.query)
    terms = retrieved.terms
    mass = (terms.mass if terms else 0.0) or 1.0
    vector_rank = {c.pk: i for i, c in enumerate(retrieved.vector_hits, 1)}
    keyword_rank = {c.pk: i for i, c in enumerate(retrieved.keyword_hits, 1)}
    own = question.org == question.searched
    return Asked(
        group=question.group,
        org=question.org,
        searched=question.searched,
        kind=question.kind,
        relevant=question.relevant if own else 0,
        X=np.array([[getattr(c.features, name) for name in FEATURES] for c in candidates]).reshape(-1, len(FEATURES)),
        y=np.array([label(c.pk) for c in candidates], dtype=float),
        order_key=np.array([micros(c.created_at) for c in candidates], dtype=np.float64),
        in_session=np.array([c.in_session for c in candidates], dtype=bool),
        in_pool=np.array([c.pk in pool for c in candidates]),
        vector_rank=np.array([vector_rank.get(c.pk, 0) for c in candidates]),
        keyword_rank=np.array([keyword_rank.get(c.pk, 0) for c in candidates]),
        names_unknown=terms.names_unknown if terms else 0.0,
        query=question.query,
        sim=np.array([c.similarity or 0.0 for c in retrieved.vector_hits]),
        sim_y=np.array([label(c.pk) for c in retrieved.vector_hits], dtype=float),
        kn=np.array([(c.keyword or 0.0) / mass for c in retrieved.keyword_hits]),
        kn_y=np.array([label(c.pk) for c in retrieved.keyword_hits], dtype=float),
        names_shared=_names_shared(principal, question.query, [c.pk for c in candidates]),
        names_variants=_names_variants(principal, question.query, [c.pk for c in candidates]),
    )


def _names_variants(principal: Any, query: str, pks: list[Any]) -> dict[str, np.ndarray]:
    import math

    from knowledge.models import Mention
    from knowledge.names import query_names
    from knowledge.words import alias_words
    from memories.models import Memory
    from memories.search.words import ABBREVIATIONS

    organization = principal.organization.pk
    asked = [k for k in query_names(query, alias_words.keys(organization)) if k not in ABBREVIATIONS]
    zeros = np.zeros(len(pks))
    if not asked:
        return {"names_noabbr": zeros, "names_rare": zeros}
    total = Memory.objects.filter(organization_id=organization).count()
    weight = {}
    for key in asked:
        df = Mention.objects.filter(organization_id=organization, key=key).count()
        weight[key] = math.log((total + 1) / (df + 1)) / math.log(total + 1)
    mass = sum(weight.values()) or 1.0
    shared: dict[Any, list[str]] = {}
    for pk, key in Mention.objects.filter(memory_id__in=pks, key__in=asked).values_list("memory_id", "key"):
        shared.setdefault(pk, []).append(key)
    return {
        "names_noabbr": np.array([len(shared.get(pk, [])) / len(asked) for pk in pks], dtype=float),
        "names_rare": np.array([sum(weight[k] for k in shared.get(pk, [])) / mass for pk in pks], dtype=float),
    }


def _names_shared(principal: Any, query: str, pks: list[Any]) -> np.ndarray:
    from knowledge.models import Mention
    from knowledge.names import query_names
    from knowledge.words import alias_words

    asked = query_names(query, alias_words.keys(principal.organization.pk))
    if not asked:
        return np.zeros(len(pks))
    shared: dict[Any, int] = {}
    for pk in Mention.objects.filter(memory_id__in=pks, key__in=asked).values_list("memory_id", flat=True):
        shared[pk] = shared.get(pk, 0) + 1
    return np.array([shared.get(pk, 0) / len(asked) for pk in pks], dtype=float)


def collect_set(path: Path, first_org: int) -> list[Asked]:
    """A FAQ-format set: each question in its organization (its answer relevant) and in the others."""
    from tqdm import tqdm

    from bench.retrieval import ID_KEY, load_set, store

    data = load_set(path)
    name = path.stem
    asked: list[Asked] = []
    with scratch_database("fit_" + re.sub(r"[^a-z0-9]", "_", name.lower())):
        from memories.models import Memory
        from memories.search import search_caches

        search_caches.reset()
        principals, _, _ = store(data)
        orgs = list(principals)
        ids = {
            org: dict(
                Memory.objects.filter(organization=principals[org].organization).values_list(
                    "pk", "metadata__" + ID_KEY
                )
            )
            for org in orgs
        }
        for question in tqdm(data["questions"], desc=name, unit="q", file=sys.stderr):
            mine = orgs.index(question["org"])
            for searched, org in enumerate(orgs):
                own = org == question["org"]

                def label(pk: Any, own: bool = own, org: str = org, answer: str = question["answer"]) -> float:
                    return 1.0 if own and ids[org].get(pk) == answer else 0.0

                asked.append(
                    ask(
                        Question(
                            name,
                            first_org + mine,
                            first_org + searched,
                            question.get("kind", ""),
                            question["question"],
                            1,
                        ),
                        principals[org],
                        label,
                    )
                )
        search_caches.reset()
    return asked


def collect_locomo(path: Path, first_org: int) -> list[Asked]:
    from tqdm import tqdm

    from bench import locomo

    data = json.loads(path.read_text())
    asked: list[Asked] = []
    with scratch_database("fit_locomo"):
        from memories.models import Memory
        from memories.search import search_caches

        search_caches.reset()
        principals, known_ids, _ = locomo.ingest(data, keep=False)
        dia = [
            dict(Memory.objects.filter(organization=p.organization).values_list("pk", "metadata__dia_id"))
            for p in principals
        ]
        questions = [
            (index, qa, locomo.evidence_ids(qa.get("evidence", []), known_ids[index]))
            for index, sample in enumerate(data)
            for qa in sample["qa"]
            if qa.get("category") in locomo.CATEGORIES
        ]
        for index, qa, evidence in tqdm([q for q in questions if q[2]], desc="locomo", unit="q", file=sys.stderr):
            for searched, principal in enumerate(principals):
                own = searched == index

                def label(pk: Any, own: bool = own, searched: int = searched, evidence: set[str] = evidence) -> float:
                    return 1.0 if own and dia[searched].get(pk) in evidence else 0.0

                asked.append(
                    ask(
                        Question(
                            "locomo",
                            first_org + index,
                            first_org + searched,
                            locomo.CATEGORIES[qa["category"]],
                            qa["question"],
                            len(evidence),
                        ),
                        principal,
                        label,
                    )
                )
        search_caches.reset()
    return asked
