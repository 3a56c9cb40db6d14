"""Every primary and unique key of a code index's files, chunks, runs and uploads names the organization
(memory_platform.db.tenant_unique), made while the tables are written to."""

from django.db import migrations, models

from memory_platform.db.tenant_unique import UniqueChange, keys_with_organization


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently, each key swapped in a moment's lock

    dependencies = [
        ("code_index", "0005_references_within_the_organization"),
    ]

    operations = [
        keys_with_organization(
            "code_index",
            primary_keys=["codefile", "codechunk", "codeindexrun", "codeupload"],
            unique=[
                UniqueChange("codefile", name="code_file_path_unique"),
                UniqueChange("codeindexrun", name="code_run_one_open"),
                UniqueChange("codeupload", name="code_upload_path_unique"),
            ],
            state_operations=[
                migrations.RemoveConstraint(model_name="codefile", name="code_file_path_unique"),
                migrations.AddConstraint(model_name="codefile", constraint=models.UniqueConstraint(fields=("index", "path", "organization"), name="code_file_path_unique")),
                migrations.RemoveConstraint(model_name="codeindexrun", name="code_run_one_open"),
                migrations.AddConstraint(model_name="codeindexrun", constraint=models.UniqueConstraint(fields=("index", "organization"), condition=models.Q(("status", "indexing")), name="code_run_one_open")),
                migrations.RemoveConstraint(model_name="codeupload", name="code_upload_path_unique"),
                migrations.AddConstraint(model_name="codeupload", constraint=models.UniqueConstraint(fields=("run", "path", "organization"), name="code_upload_path_unique")),
            ],
        ),
    ]
