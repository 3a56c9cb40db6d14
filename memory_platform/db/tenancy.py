"""Joins that stay inside one organization.

Every row of a tenant names its organization, and a join between two tenant tables says that the
joined row's organization is the row's own. The database answers the same either way (a memory's
versions are its organization's), but the condition is what lets a distributed PostgreSQL (Citus,
distributed by organization) answer the join on one node (docs/explanation/performance.md, "Past
one database server"); the test suite checks every statement it runs for it
(tests/tenancy_guard.py).
"""

from __future__ import annotations

from django.db.models import F, OuterRef, Q


def same_organization(*relations: str) -> Q:
    """The rows reached through these relations belong to the row's own organization."""
    return Q(**{f"{relation}__organization": F("organization") for relation in relations})


def outer_organization() -> OuterRef:
    """In a subquery: the organization of the row the subquery is asked for."""
    return OuterRef("organization")
