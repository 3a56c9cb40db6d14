"""Every primary and unique key of import runs and imported ids names the organization
(memory_platform.db.tenant_unique), made while the tables are written to."""

from django.db import migrations, models

from memory_platform.db.tenant_unique import UniqueChange, keys_with_organization


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently, each key swapped in a moment's lock

    dependencies = [
        ("transfer", "0004_references_within_the_organization"),
    ]

    operations = [
        keys_with_organization(
            "transfer",
            primary_keys=["importrun", "importedid"],
            unique=[
                UniqueChange("importedid", name="transfer_imported_once"),
            ],
            state_operations=[
                migrations.RemoveConstraint(model_name="importedid", name="transfer_imported_once"),
                migrations.AddConstraint(model_name="importedid", constraint=models.UniqueConstraint(fields=("run", "model", "old", "organization"), name="transfer_imported_once")),
            ],
        ),
    ]
