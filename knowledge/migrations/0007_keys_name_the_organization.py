"""Every primary and unique key of links, mentions, entities, aliases, predicates and triples names the organization
(memory_platform.db.tenant_unique), made while the tables are written to."""

from django.db import migrations, models

from memory_platform.db.tenant_unique import UniqueChange, keys_with_organization


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently, each key swapped in a moment's lock

    dependencies = [
        ("knowledge", "0006_references_within_the_organization"),
    ]

    operations = [
        keys_with_organization(
            "knowledge",
            primary_keys=["entity", "entityalias", "memorylink", "mention", "predicate", "triple"],
            unique=[
                UniqueChange("memorylink", name="memory_link_unique_active"),
                UniqueChange("mention", name="mention_unique_per_memory"),
            ],
            state_operations=[
                migrations.RemoveConstraint(model_name="memorylink", name="memory_link_unique_active"),
                migrations.AddConstraint(model_name="memorylink", constraint=models.UniqueConstraint(fields=("source", "target", "relation_type", "organization"), condition=models.Q(("removed_at__isnull", True)), name="memory_link_unique_active")),
                migrations.RemoveConstraint(model_name="mention", name="mention_unique_per_memory"),
                migrations.AddConstraint(model_name="mention", constraint=models.UniqueConstraint(fields=("memory", "key", "organization"), name="mention_unique_per_memory")),
            ],
        ),
    ]
