"""The primary key of an organization's instruction texts names the organization
(memory_platform.db.tenant_unique), made while the tables are written to."""

from django.db import migrations

from memory_platform.db.tenant_unique import keys_with_organization


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently, each key swapped in a moment's lock

    dependencies = [
        ("instructions", "0002_indexes_covered_by_composites"),
    ]

    operations = [
        keys_with_organization(
            "instructions",
            primary_keys=["instructiontext"],
            unique=[],
            state_operations=[],
        ),
    ]
