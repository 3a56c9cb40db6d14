"""Every table of the platform's own apps either belongs to one organization and says which (an
``organization`` column), or is shared by all of them for a reason written in tests/tenancy_sql.py.

That column is what keeps more than one database server open (docs/explanation/performance.md,
"Past one database server"): Citus distributes a table by it, co-locating an organization's rows
of every table on one node, and what all organizations share becomes a reference table copied to
each. A tenant's table without the column could be neither: its rows could not follow their
organization. A new table of an app must take a side.
"""

from __future__ import annotations

from tests.tenancy_sql import SHARED, has_organization, platform_tables


def test_every_table_belongs_to_an_organization_or_is_shared_for_a_reason() -> None:
    undecided = sorted(
        table for table, model in platform_tables().items() if not has_organization(model) and table not in SHARED
    )
    assert not undecided, f"{undecided}: give each an organization (a tenant's rows) or list it in SHARED with why"


def test_the_shared_tables_are_there_and_name_no_organization() -> None:
    tables = platform_tables()
    assert set(SHARED) <= set(tables), set(SHARED) - set(tables)
    assert not [table for table in SHARED if has_organization(tables[table])]
