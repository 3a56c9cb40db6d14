"""Duplicate, related and contradicting memories: one set of rules for the worker, writes and tools
(lifecycle.consolidation, memories.hints, memory-consolidate).

Two memories are compared only within one organization and one visibility scope (scope type,
repository, owner), and only while both are alive (not deleted, not superseded):

- *exact duplicate*: the same content once case, white space and punctuation are set aside;
- *near duplicate*: embeddings at least ``CONSOLIDATION_NEAR_DUPLICATE`` similar, the same memory
  type, and nothing that tells them apart (below);
- *contradiction candidate*: at least ``CONSOLIDATION_CONTRADICTION`` similar, but the texts disagree
  on a number, a date, a negation or a named value (a quoted or code value, a dashed identifier, a
  proper name) —
  "timeout is 30 s" against "timeout is 60 s", "deploy on Friday" against "deploy on Monday";
  and, less alike (from ``CONSOLIDATION_CONFLICT``), when they are one statement with a number or a
  negation changed: at least ``CONSOLIDATION_CONFLICT_FRAME`` of their words line up, in order
  ("ruff, line length 100" against "black, line length 88": the embedding puts such pairs far
  apart, their words do not), or with a name changed where ``NAMED_VALUE_FRAME`` of them do
  ("Kafka is our event bus" against "RabbitMQ is our event bus");
- *related*: at least ``CONSOLIDATION_RELATED`` similar and none of the above: a *possible duplicate*
  when nothing tells them apart, two statements about different things when a value does.

Everything here is deterministic: no model is asked whether two texts mean the same.
"""

from __future__ import annotations

import difflib
import enum
import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from uuid import UUID

from django.conf import settings
from django.db.models import Q, QuerySet

from memories.models import Memory
from memories.search.vector import vector_candidates


class MatchKind(enum.StrEnum):
    DUPLICATE = "duplicate"
    CONTRADICTION = "contradiction"
    RELATED = "related"


_NON_WORD = re.compile(r"[\W_]+")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
# A named value: an identifier with a dash, dot, slash or underscore (billing-api, eu-west-1, v2.3, snake_case).
_IDENTIFIER = re.compile(r"\b[^\W_]+(?:[-_./][^\W_]+)+\b")
# A proper name inside a sentence (PostgreSQL, Friday, Kafka); a sentence's first word is not taken for one.
_PROPER = re.compile(r"(?<![.!?:]\s)(?<!^)(?<=\s)([A-Z][\w]*)")
# A quoted or code value: `ruff`, "eu-west-1", 'Black'.
_QUOTED = re.compile(r"`([^`]{1,80})`|\"([^\"]{1,80})\"|'([^']{1,80})'|“([^”]{1,80})”")
_NEGATIONS = frozenset(
    {"not", "no", "never", "none", "nothing", "without", "cannot", "cant", "dont", "doesnt", "didnt", "isnt",
     "arent", "wasnt", "werent", "wont", "shouldnt", "mustnt", "neither", "nor", "forbidden", "disallowed", "avoid"}
)  # fmt: skip
# "Do not" and "don't" count alike: the apostrophe is dropped before the words are compared.
_APOSTROPHES = re.compile("['\u2019]")


def normalized_content(text: str) -> str:
    """Content as exact-duplicate detection compares it: case, white space and punctuation set aside."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _NON_WORD.sub(" ", folded).strip()


def _words(text: str) -> list[str]:
    return normalized_content(_APOSTROPHES.sub("", text)).split()


@dataclass(frozen=True)
class Differences:
    """What two similar texts disagree on; empty when nothing tells them apart."""

    numbers: tuple[list[str], list[str]] = ([], [])
    values: tuple[list[str], list[str]] = ([], [])
    negation: tuple[int, int] | None = None

    def __bool__(self) -> bool:
        return bool(self.numbers[0] or self.numbers[1] or self.values[0] or self.values[1] or self.negation)

    def as_evidence(self) -> dict[str, Any]:
        evidence: dict[str, Any] = {}
        if self.numbers[0] or self.numbers[1]:
            evidence["numbers"] = {"first": self.numbers[0], "second": self.numbers[1]}
        if self.values[0] or self.values[1]:
            evidence["values"] = {"first": self.values[0], "second": self.values[1]}
        if self.negation:
            evidence["negations"] = {"first": self.negation[0], "second": self.negation[1]}
        return evidence


def _only_in(first: Counter[str], second: Counter[str]) -> list[str]:
    return sorted((first - second).elements())


def _named_values(text: str) -> Counter[str]:
    quoted = [next(g for g in match.groups() if g).strip().casefold() for match in _QUOTED.finditer(text)]
    # Numbers inside identifiers (eu-west-1) are compared as numbers already.
    unquoted = _QUOTED.sub(" ", text)
    named = [value.casefold() for value in _IDENTIFIER.findall(unquoted) if not value[0].isdigit()]
    proper = [value.casefold() for value in _PROPER.findall(unquoted)]
    return Counter(quoted + named + proper)


@dataclass(frozen=True)
class _Facets:
    """What comparisons read of one text, worked out once: a write is compared with several
    neighbours, and a neighbour with several writes."""

    numbers: Counter[str]
    values: Counter[str]
    negations: int
    words: tuple[str, ...]


@functools.lru_cache(maxsize=4096)
def _facets(text: str) -> _Facets:
    words = tuple(_words(text))
    return _Facets(
        numbers=Counter(_NUMBER.findall(text)),
        values=_named_values(text),
        negations=sum(1 for word in words if word in _NEGATIONS),
        words=words,
    )


def differences(first: str, second: str) -> Differences:
    """Numbers (dates and versions included), quoted or named values, and the parity of negations."""
    one, other = _facets(first), _facets(second)
    numbers = (one.numbers, other.numbers)
    values = (one.values, other.values)
    negations = (one.negations, other.negations)
    return Differences(
        numbers=(_only_in(numbers[0], numbers[1]), _only_in(numbers[1], numbers[0])),
        values=(_only_in(values[0], values[1]), _only_in(values[1], values[0])),
        # One says "do" where the other says "do not": an odd difference in negations.
        negation=negations if (negations[0] - negations[1]) % 2 else None,
    )


@dataclass(frozen=True)
class Match:
    """How one memory relates to another it was compared with."""

    memory_id: UUID
    other_id: UUID
    kind: MatchKind
    similarity: float
    exact: bool = False
    differences: dict[str, Any] = field(default_factory=dict)

    @property
    def pair(self) -> tuple[UUID, UUID]:
        return (self.memory_id, self.other_id) if self.memory_id < self.other_id else (self.other_id, self.memory_id)


# The share of words that must line up for a swapped name (rather than a number) to be a contradiction.
NAMED_VALUE_FRAME = 0.8


def frame_share(first: str, second: str) -> float:
    """How much of two texts is one frame: the share of their words that line up, in order (difflib's
    ratio over words, 2 * matched / total)."""
    return difflib.SequenceMatcher(None, _facets(first).words, _facets(second).words, autojunk=False).ratio()


def _frame_at_least(first: str, second: str, share: float) -> bool:
    """``frame_share(first, second) >= share``, without lining the words up when their counts alone
    (difflib's upper bounds, in linear time) already fall short."""
    matcher = difflib.SequenceMatcher(None, _facets(first).words, _facets(second).words, autojunk=False)
    return matcher.real_quick_ratio() >= share and matcher.quick_ratio() >= share and matcher.ratio() >= share


class Compared(Protocol):
    """What the rules read of a memory: a model instance, or a row's few columns (memories.hints)."""

    @property
    def pk(self) -> Any: ...

    @property
    def current_content(self) -> str: ...

    @property
    def memory_type(self) -> str: ...


# A write is compared with several neighbours, and a neighbour with several writes: each text is
# set in its compared form once (the memories of a batch and their neighbours: a few thousand).
_normalized = functools.lru_cache(maxsize=4096)(normalized_content)


def classify(first: Compared, second: Compared, similarity: float) -> Match | None:
    """The rules of the module docstring applied to two memories of one scope; None: unrelated."""
    if _normalized(first.current_content) == _normalized(second.current_content):
        return Match(first.pk, second.pk, MatchKind.DUPLICATE, max(similarity, 1.0 if similarity > 0 else 0.0), True)
    if similarity < min(settings.CONSOLIDATION_RELATED, settings.CONSOLIDATION_CONFLICT):
        return None
    found = differences(first.current_content, second.current_content)
    kind: MatchKind | None
    if found:
        # Alike but for a value: very alike, one of them is probably out of date; less alike, most
        # often two statements about different things ("billing-api" vs "ledger-api"), unless they
        # are one sentence with its number or its negation changed.
        if similarity >= settings.CONSOLIDATION_CONTRADICTION or _value_changed(first, second, found, similarity):
            kind = MatchKind.CONTRADICTION
        else:
            kind = MatchKind.RELATED if similarity >= settings.CONSOLIDATION_RELATED else None
    elif similarity < settings.CONSOLIDATION_RELATED:
        kind = None
    elif similarity >= settings.CONSOLIDATION_NEAR_DUPLICATE and first.memory_type == second.memory_type:
        kind = MatchKind.DUPLICATE
    else:
        kind = MatchKind.RELATED
    if kind is None:
        return None
    return Match(first.pk, second.pk, kind, similarity, differences=found.as_evidence())


def _value_changed(first: Compared, second: Compared, found: Differences, similarity: float) -> bool:
    if similarity < settings.CONSOLIDATION_CONFLICT:
        return False
    # A name swapped in one statement ("PostgreSQL" for "MySQL") as well, where more of the words
    # line up: two statements about different subjects share their frame but not all of it.
    changed = found.numbers[0] or found.numbers[1] or found.negation
    share = settings.CONSOLIDATION_CONFLICT_FRAME if changed else NAMED_VALUE_FRAME
    return _frame_at_least(first.current_content, second.current_content, share)


# --- where to look -----------------------------------------------------------------------------


def alive(queryset: QuerySet[Memory]) -> QuerySet[Memory]:
    return queryset.filter(deleted_at__isnull=True, superseded_by__isnull=True)


def same_scope_q(memory: Memory) -> Q:
    return Q(
        organization_id=memory.organization_id,
        scope_type=memory.scope_type,
        repository_id=memory.repository_id,
        owner_id=memory.owner_id,
    )


def nearest(memory: Memory, *, limit: int, candidates: QuerySet[Memory] | None = None) -> list[tuple[Memory, float]]:
    """The memories of ``memory``'s scope closest to its embedding, with their cosine similarity.

    The search's own vector retriever: exact in a small scope, the HNSW graph otherwise.
    """
    if memory.embedding is None:
        return []
    scope = alive(candidates if candidates is not None else Memory.objects.all())
    scope = scope.filter(same_scope_q(memory)).exclude(pk=memory.pk)
    found = vector_candidates(scope, list(memory.embedding), limit, organization_id=memory.organization_id)
    rows = Memory.objects.defer("search_vector").in_bulk([candidate.pk for candidate in found])
    return [(rows[candidate.pk], candidate.similarity or 0.0) for candidate in found if candidate.pk in rows]


def exact_twins(memories: Sequence[Memory]) -> dict[UUID, list[Memory]]:
    """For each memory, the alive memories of its scope with the same normalized content.

    Found by the normalized text in SQL, so memories without an embedding (the provider was down)
    are found too.
    """
    if not memories:
        return {}
    wanted = {normalized_content(memory.current_content) for memory in memories}
    expression = "btrim(regexp_replace(lower(current_content), '[^[:alnum:]]+', ' ', 'g'))"
    scope = Q()
    for memory in memories:
        scope |= same_scope_q(memory)
    rows = (
        alive(Memory.objects.filter(scope))
        .defer("embedding", "search_vector")
        .extra(where=[f"{expression} = ANY(%s)"], params=[list(wanted)])  # noqa: S610 - constant SQL, values bound
    )
    by_key: dict[tuple[Any, ...], list[Memory]] = {}
    for row in rows:
        by_key.setdefault(_twin_key(row), []).append(row)
    return {memory.pk: [row for row in by_key.get(_twin_key(memory), []) if row.pk != memory.pk] for memory in memories}


def _twin_key(memory: Memory) -> tuple[Any, ...]:
    return (*_scope_tuple(memory), normalized_content(memory.current_content))


def _scope_tuple(memory: Memory) -> tuple[Any, ...]:
    return (memory.organization_id, memory.scope_type, memory.repository_id, memory.owner_id)


def matches_for(memory: Memory, *, neighbours: int = 10) -> list[Match]:
    """Every match of one memory: its exact twins and its nearest neighbours, classified."""
    found: dict[UUID, Match] = {}
    for twin in exact_twins([memory]).get(memory.pk, []):
        found[twin.pk] = Match(memory.pk, twin.pk, MatchKind.DUPLICATE, 1.0, True)
    for other, similarity in nearest(memory, limit=neighbours):
        if other.pk in found:
            continue
        match = classify(memory, other, similarity)
        if match is not None:
            found[other.pk] = match
    return sorted(found.values(), key=lambda match: -match.similarity)


def clusters(pairs: Iterable[tuple[UUID, UUID]]) -> list[set[UUID]]:
    """Connected groups of memories from duplicate pairs (union-find)."""
    parent: dict[UUID, UUID] = {}

    def root(node: UUID) -> UUID:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for first, second in pairs:
        parent[root(first)] = root(second)
    groups: dict[UUID, set[UUID]] = {}
    for node in parent:
        groups.setdefault(root(node), set()).add(node)
    return [group for group in groups.values() if len(group) > 1]
