"""The statements every request or search runs are prepared once per database connection
(memory_platform.db.prepared), and answer as they did when planned afresh each time."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from organizations.services import principal_for_token
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, search


def _prepared(table: str) -> list[tuple[int, int]]:
    """This connection's prepared statements that read ``table``: (generic plans, custom plans) run."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE %s",
            [f"%{table}%"],
        )
        return [(int(generic), int(custom)) for generic, custom in cursor.fetchall()]


def test_the_token_lookup_is_prepared_once_and_run_again(acme: Tenant) -> None:
    raw = acme.raw_tokens["agent"]
    principal_for_token(raw)
    [before] = _prepared("organizations_apitoken t")
    for _ in range(6):
        principal_for_token(raw)
    [after] = _prepared("organizations_apitoken t")
    assert sum(after) - sum(before) == 6  # the same statement, run six more times


@override_settings(DATABASE_PREPARED_STATEMENTS=False)
def test_turned_off_nothing_is_prepared(acme: Tenant) -> None:
    principal_for_token(acme.raw_tokens["agent"])
    assert _prepared("organizations_apitoken t") == []


def test_a_prepared_statement_is_logged_with_its_values(acme: Tenant) -> None:
    raw = acme.raw_tokens["agent"]
    prefix = raw.split("_")[1]
    with CaptureQueriesContext(connection) as captured:
        principal_for_token(raw)
    lookups = [q["sql"] for q in captured.captured_queries if "organizations_apitoken t" in q["sql"]]
    assert len(lookups) == 1
    assert f"t.prefix = '{prefix}'" in lookups[0]


def test_prepared_again_after_a_rollback(acme: Tenant) -> None:
    # A rollback makes psycopg forget (and deallocate) what the connection had prepared.
    raw = acme.raw_tokens["agent"]
    principal_for_token(raw)
    with pytest.raises(RuntimeError), transaction.atomic():
        principal_for_token(raw)
        raise RuntimeError("roll back to the savepoint")
    assert principal_for_token(raw).organization == acme.organization
    assert len(_prepared("organizations_apitoken t")) == 1


def test_a_search_answers_the_same_prepared_or_not(acme: Tenant, make_memory: MemoryFactory) -> None:
    for text in ("The deployment pipeline runs on merge.", "Deploys freeze on Fridays.", "Lunch is at noon."):
        make_memory(current_content=text)
    prepared = [hit_ids(search(acme.agent, query="when do deploys run")) for _ in range(7)]
    with override_settings(DATABASE_PREPARED_STATEMENTS=False):
        planned = hit_ids(search(acme.agent, query="when do deploys run"))
    assert planned and all(ids == planned for ids in prepared)
    assert _prepared("memories_memory m")  # the features and the hits
