"""A code file and an uploaded file carry their organization, as every other row of a tenant does
(tests/platform/test_tenant_tables.py), added online (memory_platform.db.migration_ops.organization_from_parent)."""

from django.db import migrations

from memory_platform.db.migration_ops import organization_from_parent


class Migration(migrations.Migration):
    atomic = False  # each batch of the fill commits on its own

    dependencies = [
        ("code_index", "0003_indexes_covered_by_composites"),
        ("organizations", "0002_indexes_covered_by_composites"),
    ]

    operations = [
        organization_from_parent(
            "codefile", table="code_index_codefile", key="id", parent="index", parent_table="code_index_codeindex"
        ),
        organization_from_parent(
            "codeupload", table="code_index_codeupload", key="id", parent="run",
            parent_table="code_index_codeindexrun",
        ),  # fmt: skip
    ]
