"""A small organization's keyword search reads its own rows instead of the GIN index every
organization shares (SEARCH_KEYWORD_SCAN_LIMIT): the same counts and the same candidates."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.batch import memory_batch_create
from memories.search import keyword as search_module
from memories.search.caches import search_caches
from memories.selectors import memory_visible_queryset
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db

TEXTS = [
    "Canary deploys go to one region first and wait an hour.",
    "Deploys on Friday need a second reviewer.",
    "The billing service retries webhooks three times.",
    "Rollbacks of a canary are automatic when errors double.",
    "Webhook payloads are signed with the shared secret.",
    "Team Payments owns the billing service and its deploys.",
]


def _keyword(tenant: Tenant, query: str) -> tuple[dict[str, int], list[tuple[Any, float | None]], list[str]]:
    search_caches.reset()
    with CaptureQueriesContext(connection) as queries:
        terms = search_module.QueryTerms.of(tenant.organization.pk, query)
        found, _ = search_module.keyword_candidates(memory_visible_queryset(tenant.agent), terms, 10)
    return terms.frequencies, [(c.pk, c.keyword) for c in found], [q["sql"] for q in queries]


@pytest.mark.parametrize("query", ["canary deploys", "billing webhooks", "who owns deploys of the billing service?"])
def test_scanning_finds_what_the_index_finds(acme: Tenant, settings: Any, query: str) -> None:
    memory_batch_create(
        principal=acme.agent,
        entries=[{"scope_type": "organization", "memory_type": "fact", "current_content": t} for t in TEXTS],
    )
    settings.SEARCH_KEYWORD_SCAN_LIMIT = 0  # through the GIN index
    indexed = _keyword(acme, query)
    settings.SEARCH_KEYWORD_SCAN_LIMIT = 10_000  # acme is small: its rows, one by one
    scanned = _keyword(acme, query)

    assert scanned[:2] == indexed[:2]
    assert scanned[1], "the query matches"
    assert not any("''::tsvector" in sql for sql in indexed[2])
    holding = [sql for sql in scanned[2] if "count(*)" in sql and "to_tsquery" in sql]
    retrieving = [sql for sql in scanned[2] if "s.search_vector" in sql and "count(*)" not in sql]
    assert holding and retrieving
    assert all("coalesce(search_vector, ''::tsvector) @@" in sql for sql in holding)
    assert all("coalesce(s.search_vector, ''::tsvector) @@" in sql for sql in retrieving)


def test_a_larger_organizations_common_words_are_counted_in_one_pass(acme: Tenant, settings: Any) -> None:
    memory_batch_create(
        principal=acme.agent,
        entries=[{"scope_type": "organization", "memory_type": "fact", "current_content": t} for t in TEXTS],
    )
    settings.SEARCH_KEYWORD_SCAN_LIMIT = 0  # acme counts as large: its statistics are kept
    frequencies, _found, statements = _keyword(acme, "canary deploys for the zeppelin")

    # Every word of the query held by any memory is counted in the one pass (ts_stat); the one no
    # memory holds is counted on its own, and holds in none.
    assert frequencies == {"canari": 2, "deploy": 3, "zeppelin": 0}
    assert sum("ts_stat(" in sql for sql in statements) == 1
    [counted] = [sql for sql in statements if "count(*)" in sql and "to_tsquery" in sql]
    assert "zeppelin" in counted and "canari" not in counted
