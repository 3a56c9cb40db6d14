"""A memory's versions and its access counts carry its organization, as every other row of a tenant
does (tests/platform/test_tenant_tables.py): added online, with a trigger that gives a row inserted
without it its memory's (memory_platform.db.migration_ops.organization_from_parent)."""

from django.db import migrations

from memory_platform.db.migration_ops import organization_from_parent


class Migration(migrations.Migration):
    atomic = False  # each batch of the fill commits on its own

    dependencies = [
        ("memories", "0012_indexes_covered_by_composites"),
        ("organizations", "0002_indexes_covered_by_composites"),
    ]

    operations = [
        organization_from_parent(
            "memoryversion", table="memories_memoryversion", key="id", parent="memory", parent_table="memories_memory"
        ),
        organization_from_parent(
            "memoryaccess", table="memories_memoryaccess", key="memory_id", parent="memory",
            parent_table="memories_memory",
        ),  # fmt: skip
    ]
