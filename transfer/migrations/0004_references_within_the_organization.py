"""Imported ids to their import runs: references within the organization
(memory_platform.db.tenant_keys), added while the tables are written to."""

import django.db.models.deletion
from django.db import migrations, models

from memory_platform.db.tenant_keys import tenant_foreign_keys


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently, keys validated while the tables are written to

    dependencies = [
        ("transfer", "0003_imported_ids_name_their_organization"),
    ]

    operations = [
        tenant_foreign_keys(
            "transfer",
            migrations.AlterField(
                model_name="importedid",
                name="run",
                field=models.ForeignKey(
                    db_constraint=False,
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="ids",
                    to="transfer.importrun",
                ),
            ),
            parents=["importrun"],
        ),
    ]
