"""Every table of the platform's own apps either belongs to one organization and says which (an
``organization`` column), or is shared by all of them for a reason written here.

That column is what keeps more than one database server open (docs/explanation/performance.md,
"Past one database server"): Citus distributes a table by it, co-locating an organization's rows
of every table on one node, and what all organizations share becomes a reference table copied to
each. A tenant's table without the column can be neither: its rows cannot follow their organization.
The tables that lack it today are listed; the list may shrink, never grow, and a new table of an app
must take a side.
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

# A tenant's rows without their organization on them yet: each reaches it through its parent's key.
# To distribute them, each needs the column (and the parent's key widened to include it).
WITHOUT_ORGANIZATION = {
    "lifecycle_consolidationproposal_memories": "consolidationproposal",
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
    undecided = {
        table for table, model in _tables().items()
        if not _has_organization(model) and table not in SHARED and table not in WITHOUT_ORGANIZATION
    }  # fmt: skip
    assert not undecided, (
        f"{sorted(undecided)}: give each an organization (a tenant's rows) or list it in SHARED with why"
    )


def test_the_lists_name_only_tables_that_are_there_and_as_they_say() -> None:
    tables = _tables()
    assert set(SHARED) <= set(tables), set(SHARED) - set(tables)
    assert set(WITHOUT_ORGANIZATION) <= set(tables), set(WITHOUT_ORGANIZATION) - set(tables)
    now_with_it = sorted(table for table in WITHOUT_ORGANIZATION if _has_organization(tables[table]))
    assert not now_with_it, f"{now_with_it} carry their organization now: take them off WITHOUT_ORGANIZATION"
    for table, parent in WITHOUT_ORGANIZATION.items():
        field = tables[table]._meta.get_field(parent)
        assert field.is_relation and field.related_model is not None, (table, parent)
        assert _has_organization(field.related_model), f"{table} reaches its organization through {parent}"
