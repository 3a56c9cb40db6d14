"""The statements every request or search runs are prepared once per database connection
(memory_platform.db.prepared), and answer as they did when planned afresh each time."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from memory_platform.db.prepared import bound_cursor, prepared_cursor
from organizations.tokens import principal_for_token
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
    before = _prepared("organizations_apitoken t")  # the fixture's own lookup ran with the setting on
    principal_for_token(acme.raw_tokens["agent"])
    assert _prepared("organizations_apitoken t") == before  # neither prepared nor run as prepared


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


def test_bound_statements_are_never_prepared_and_are_logged_with_their_values(acme: Tenant) -> None:
    from memory_platform.db.prepared import bound_cursor

    with CaptureQueriesContext(connection) as captured:
        for _ in range(7):
            with bound_cursor() as cursor:
                cursor.execute("SELECT slug FROM organizations_organization WHERE id = %s", [acme.organization.pk])
                assert cursor.fetchone() == (acme.organization.slug,)
    assert _prepared("organizations_organization WHERE") == []
    assert captured.captured_queries[-1]["sql"].endswith(f"WHERE id = {acme.organization.pk}")


def test_the_retrievers_bind_their_values_apart_and_answer_as_when_bound_in_python(
    acme: Tenant, make_memory: MemoryFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memories.search import keyword, vector

    for text in ("Quarterly invoices go out on the first Monday.", "Invoices over 10k need two approvals."):
        make_memory(current_content=text)

    def both() -> list[list[Any]]:
        modes = ("keyword", "vector")
        return [hit_ids(search(acme.agent, query="invoice approvals", mode=mode, min_score=0)) for mode in modes]

    bound = both()

    def django_cursor(using: str) -> Any:  # Django's cursor: bound in Python
        return connections[using].cursor()

    monkeypatch.setattr(keyword, "bound_cursor", django_cursor)
    monkeypatch.setattr(vector, "bound_cursor", django_cursor)
    in_python = both()
    assert [len(ids) for ids in bound] == [2, 2] and bound == in_python


@pytest.mark.django_db
@pytest.mark.parametrize("cursor", [prepared_cursor, bound_cursor])
def test_ints_are_bound_as_integer_as_a_partial_index_writes_them(cursor: Any) -> None:
    # An organization's own indexes say WHERE organization_id = 7: the planner drops a query's
    # organization clause as met only when it is an integer too (a smallint made it read the
    # organization's whole btree index beside the partial one).
    with cursor() as c:
        c.execute("SELECT pg_typeof(%s)::text, pg_typeof(%s)::text, pg_typeof(%s)::text", [7, 70_000, 2**40])
        assert c.fetchone() == ("integer", "integer", "bigint")
