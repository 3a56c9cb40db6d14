"""Every table of the platform's own apps either belongs to one organization and says which (an
``organization`` column), or is shared by all of them for a reason written here.

That column is what keeps more than one database server open (docs/explanation/performance.md,
"Past one database server"): Citus distributes a table by it, co-locating an organization's rows
of every table on one node, and what all organizations share becomes a reference table copied to
each. A tenant's table without the column could be neither: its rows could not follow their
organization. A new table of an app must take a side.
"""

from __future__ import annotations

from django.apps import apps
from django.db import models

PLATFORM_APPS = frozenset(
    {"memory_platform", "organizations", "memories", "knowledge", "instructions", "lifecycle", "code_index",
     "curation", "mcp_api", "rest_api", "identity", "transfer"}
)  # fmt: skip

# Shared by every organization: Citus reference tables (or tables left on the coordinator).
SHARED = {
    "organizations_organization": "the organizations themselves: the distribution column's table",
    "organizations_user": "a person may be a member of several organizations",
    "organizations_user_groups": "Django's groups of a user (unused by the platform's roles)",
    "organizations_user_user_permissions": "Django's permissions of a user (unused by the platform's roles)",
    "memory_platform_heartbeat": "the liveness of the background processes, one row each",
    "memory_platform_ratecount": "request counts per caller and window, when Redis does not keep them",
}


def _tables() -> dict[str, type[models.Model]]:
    return {
        model._meta.db_table: model
        for model in apps.get_models(include_auto_created=True)
        if model._meta.app_label in PLATFORM_APPS and model._meta.managed and not model._meta.proxy
    }


def _has_organization(model: type[models.Model]) -> bool:
    return any(
        field.is_relation
        and field.related_model is not None
        and field.related_model._meta.label == "organizations.Organization"
        for field in model._meta.concrete_fields
    )


def test_every_table_belongs_to_an_organization_or_is_shared_for_a_reason() -> None:
    undecided = sorted(
        table for table, model in _tables().items() if not _has_organization(model) and table not in SHARED
    )
    assert not undecided, f"{undecided}: give each an organization (a tenant's rows) or list it in SHARED with why"


def test_the_shared_tables_are_there_and_name_no_organization() -> None:
    tables = _tables()
    assert set(SHARED) <= set(tables), set(SHARED) - set(tables)
    assert not [table for table in SHARED if _has_organization(tables[table])]
