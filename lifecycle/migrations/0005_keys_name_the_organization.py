"""Every primary and unique key of runs, proposals, their memories and dismissed pairs names the organization
(memory_platform.db.tenant_unique), made while the tables are written to."""

from django.db import migrations, models

from memory_platform.db.tenant_unique import UniqueChange, keys_with_organization


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently, each key swapped in a moment's lock

    dependencies = [
        ("lifecycle", "0004_references_within_the_organization"),
    ]

    operations = [
        keys_with_organization(
            "lifecycle",
            primary_keys=["lifecyclerun", "consolidationproposal", "proposalmemory", "dismissedpair"],
            unique=[
                UniqueChange("dismissedpair", name="dismissed_pair_unique"),
                UniqueChange("proposalmemory", columns=("consolidationproposal_id", "memory_id",), new_name="proposal_memory_unique"),
            ],
            state_operations=[
                migrations.RemoveConstraint(model_name="dismissedpair", name="dismissed_pair_unique"),
                migrations.AddConstraint(model_name="dismissedpair", constraint=models.UniqueConstraint(fields=("first", "second", "organization"), name="dismissed_pair_unique")),
                migrations.AlterUniqueTogether(name="proposalmemory", unique_together=set()),
                migrations.AddConstraint(model_name="proposalmemory", constraint=models.UniqueConstraint(fields=("consolidationproposal", "memory", "organization"), name="proposal_memory_unique")),
            ],
        ),
    ]
