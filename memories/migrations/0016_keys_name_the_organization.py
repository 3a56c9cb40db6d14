"""Every primary and unique key of memories, their versions, access counts and recall bundles names the organization
(memory_platform.db.tenant_unique), made while the tables are written to."""

from django.db import migrations, models

from memory_platform.db.tenant_unique import UniqueChange, keys_with_organization


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently, each key swapped in a moment's lock

    dependencies = [
        ("memories", "0015_references_within_the_organization"),
    ]

    operations = [
        keys_with_organization(
            "memories",
            primary_keys=["memory", "memoryaccess", "memoryversion", "recallbundle"],
            unique=[
                UniqueChange("memoryversion", name="memory_version_unique"),
            ],
            state_operations=[
                migrations.RemoveConstraint(model_name="memoryversion", name="memory_version_unique"),
                migrations.AddConstraint(model_name="memoryversion", constraint=models.UniqueConstraint(fields=("memory", "version", "organization"), name="memory_version_unique")),
            ],
        ),
    ]
