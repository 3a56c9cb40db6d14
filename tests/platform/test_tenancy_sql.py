"""The reading of statements that keeps every join inside one organization (tests.tenancy_sql), and
the guard that holds every test to it (tests.tenancy_guard)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.db.models import Exists, QuerySet

from knowledge.models import EntityAlias, Mention
from lifecycle.models import ConsolidationProposal, ProposalMemory, proposal_member_rows
from memories.models import Memory, MemoryVersion
from memories.selectors import memories_personal_to_others
from memory_platform.db.tenancy import outer_organization, same_organization
from tests.conftest import Tenant
from tests.tenancy_guard import Guard
from tests.tenancy_rules import ROOT
from tests.tenancy_sql import REFERENCE, cross_organization_join, distributed_tables, tenant_tables


def crossing(queryset: QuerySet[Any]) -> Any:
    sql, params = queryset.query.sql_with_params()
    return cross_organization_join(sql, params)


def test_a_join_on_the_key_alone_is_caught_and_the_organization_in_it_passes() -> None:
    versions = MemoryVersion.objects.filter(organization_id=1, memory__title="x")
    found = crossing(versions)
    assert found is not None and found.groups == (("memories_memoryversion",), ("memories_memory",))
    assert crossing(versions.filter(same_organization("memory"))) is None
    names = EntityAlias.objects.filter(organization_id=1).values_list("alias", "entity__name")
    assert crossing(names) is not None
    assert crossing(names.filter(same_organization("entity"))) is None


def test_two_tables_pinned_to_one_organization_pass_and_to_two_do_not() -> None:
    sql = (
        "SELECT 1 FROM memories_memory m JOIN knowledge_mention k ON k.memory_id = m.id"
        " WHERE m.organization_id = %s AND k.organization_id = %s"
    )
    assert cross_organization_join(sql, [7, 7]) is None
    assert cross_organization_join(sql, [7, 8]) is not None
    assert cross_organization_join(sql.replace("%s", "%(org)s"), {"org": 7}) is None
    # A list of one organization is that organization; of two, neither.
    listed = sql.replace("k.organization_id = %s", "k.organization_id = ANY(%s)")
    assert cross_organization_join(listed, [7, [7]]) is None
    assert cross_organization_join(listed, [7, [7, 8]]) is not None


def test_only_equalities_at_the_top_of_the_conditions_tie() -> None:
    base = "SELECT 1 FROM memories_memory m JOIN knowledge_mention k ON k.memory_id = m.id WHERE "
    assert cross_organization_join(base + "k.organization_id = m.organization_id", []) is None
    assert cross_organization_join(base + "(k.organization_id = m.organization_id OR k.key = 'x')", []) is not None
    assert cross_organization_join(base + "NOT (k.organization_id <> m.organization_id)", []) is not None


def test_a_correlated_subquery_must_tie_itself_to_the_row_it_is_asked_for() -> None:
    proposals = ConsolidationProposal.objects.filter(organization_id=1)
    loose = ProposalMemory.objects.filter(consolidationproposal_id=proposals.values("pk")[:1])
    assert crossing(proposals.filter(Exists(ProposalMemory.objects.filter(memory__title="x")))) is not None
    tied = ProposalMemory.objects.filter(same_organization("memory"), organization=outer_organization())
    assert crossing(proposals.filter(Exists(tied.filter(memory__title="x")))) is None
    assert crossing(loose) is not None
    # The admin's "someone else's personal memory" subquery is asked within the row's organization.
    assert (
        crossing(Mention.objects.filter(organization_id=1).exclude(memory__in=memories_personal_to_others(None)))
        is None
    )


def test_set_operations_stack_rows_and_system_scope_memories_are_shared() -> None:
    union = (
        "SELECT id FROM memories_memory WHERE organization_id = %s"
        " UNION ALL SELECT id FROM memories_memory WHERE scope_type = %s AND NOT organization_id = %s"
    )
    assert cross_organization_join(union, [1, "system", 1]) is None
    visible = (
        "SELECT 1 FROM knowledge_memorylink l WHERE l.organization_id = %s AND l.target_id IN ("
        "SELECT m.id FROM memories_memory m WHERE (m.organization_id = %s AND m.scope_type <> 'user')"
        " OR (m.scope_type = %s AND NOT m.organization_id = %s))"
    )
    assert cross_organization_join(visible, [1, 1, "system", 1]) is None
    assert cross_organization_join(visible, [1, 2, "system", 1]) is not None
    assert cross_organization_join(visible, [1, 1, "repository", 1]) is not None


def test_an_insert_takes_the_organization_it_selects() -> None:
    sql = (
        "INSERT INTO memories_memoryaccess (organization_id, memory_id) SELECT m.organization_id, m.id"
        " FROM memories_memory m JOIN knowledge_mention k"
        " ON k.organization_id = m.organization_id AND k.memory_id = m.id"
    )
    assert cross_organization_join(sql, []) is None
    swapped = sql.replace("(organization_id, memory_id)", "(memory_id, organization_id)")
    assert cross_organization_join(swapped, []) is not None


def test_an_insert_of_values_reads_nothing_unless_a_select_in_it_does() -> None:
    rows = ", ".join(["(%s, %s)"] * 3000)
    bulk = f'INSERT INTO "memories_memory" ("id", "organization_id") VALUES {rows} RETURNING "memories_memory"."id"'  # noqa: S608 - a statement to read, not to run
    assert cross_organization_join(bulk, [1] * 6000) is None
    reading = (
        "INSERT INTO knowledge_mention (memory_id, organization_id) VALUES ("
        "(SELECT m.id FROM memories_memory m JOIN knowledge_memorylink l ON l.target_id = m.id), %s)"
    )
    assert cross_organization_join(reading, [1]) is not None


def test_reference_tables_are_joined_by_their_id() -> None:
    assert crossing(Memory.objects.filter(organization_id=1).select_related("repository")) is None
    assert crossing(proposal_member_rows("repository").filter(consolidationproposal_id=None)) is None


def test_what_cannot_be_read_is_reported() -> None:
    found = cross_organization_join("SELECT FROM memories_memory, knowledge_mention WHERE (", [])
    assert found is not None and "unreadable" in found.groups[0][0]


def test_the_reference_tables_are_tenant_tables_the_others_are_distributed() -> None:
    tenants = tenant_tables()
    assert set(REFERENCE) <= set(tenants)
    assert distributed_tables() == frozenset(set(tenants) - set(REFERENCE))
    assert {
        "memories_memory",
        "memories_memoryversion",
        "knowledge_mention",
        "code_index_codechunk",
    } <= distributed_tables()


@pytest.mark.joins_across_organizations
def test_the_guard_keeps_what_the_platform_runs_not_what_a_test_runs(acme: Tenant) -> None:
    statement = "list(MemoryVersion.objects.filter(organization_id=organization, memory__title='x'))"
    # The same statement, once as if the platform ran it (code compiled under an app's path) and
    # once from this test.
    platform_code = compile(statement, str(ROOT / "memories" / "versions.py"), "eval")
    with Guard().installed() as guard:
        eval(platform_code, {"MemoryVersion": MemoryVersion, "organization": acme.organization.pk})  # noqa: S307
        list(MemoryVersion.objects.filter(organization_id=acme.organization.pk, memory__title="x"))
    assert len(guard.found) == 1
    found, callers = guard.found[0]
    assert callers[0].startswith("memories/versions.py:1 ")
    assert found.groups == (("memories_memoryversion",), ("memories_memory",))
    assert Path(__file__).is_relative_to(ROOT) and connection.vendor == "postgresql"
