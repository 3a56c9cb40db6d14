"""Chunks to their files, uploads to their runs: references within the organization
(memory_platform.db.tenant_keys), added while the tables are written to."""

import django.db.models.deletion
from django.db import migrations, models

from memory_platform.db.tenant_keys import tenant_foreign_keys


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently, keys validated while the tables are written to

    dependencies = [
        ("code_index", "0004_files_and_uploads_name_their_organization"),
    ]

    operations = [
        tenant_foreign_keys(
            "code_index",
            migrations.AlterField(
                model_name="codechunk",
                name="file",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="chunks",
                    to="code_index.codefile",
                ),
            ),
            migrations.AlterField(
                model_name="codeupload",
                name="run",
                field=models.ForeignKey(
                    db_constraint=False,
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="uploads",
                    to="code_index.codeindexrun",
                ),
            ),
            parents=["codefile", "codeindexrun"],
        ),
    ]
