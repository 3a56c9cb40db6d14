"""An imported row's old and new ids carry the organization they were imported into, as every other
row of a tenant does (tests/platform/test_tenant_tables.py), added online
(memory_platform.db.migration_ops.organization_from_parent)."""

from django.db import migrations

from memory_platform.db.migration_ops import organization_from_parent


class Migration(migrations.Migration):
    atomic = False  # each batch of the fill commits on its own

    dependencies = [
        ("transfer", "0002_indexes_covered_by_composites"),
        ("organizations", "0002_indexes_covered_by_composites"),
    ]

    operations = [
        organization_from_parent(
            "importedid", table="transfer_importedid", key="id", parent="run", parent_table="transfer_importrun"
        ),
    ]
