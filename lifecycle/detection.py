"""What curators said of pairs of memories: dismissed pairs are never proposed together again.

Which memories are alike (duplicates, contradictions) is memories.similarity: writes, the worker and
the tools all use its one set of rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations
from uuid import UUID

from django.db.models import Q

from lifecycle.models import DismissedPair


def dismissed(memory_ids: Iterable[UUID]) -> bool:
    """Whether a curator said any two of these memories are not duplicates."""
    pairs = Q()
    for first, second in combinations(sorted(memory_ids), 2):
        pairs |= Q(first_id=first, second_id=second)
    return bool(pairs) and DismissedPair.objects.filter(pairs).exists()
