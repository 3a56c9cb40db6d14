# Search reads a memory written in a conversation session (source.session) next to the memories
# written before and after it in that session: this partial index finds them. Built concurrently, as
# the table may be large; only memories with a session are in it, so other writes do not pay for it.

import django.db.models.fields.json
import django.db.models.lookups
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("memories", "0007_freshness_in_the_access_table"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                models.F("organization"),
                django.db.models.fields.json.KeyTextTransform("session", "source"),
                models.F("created_at"),
                condition=models.Q(
                    django.db.models.lookups.IsNull(django.db.models.fields.json.KeyTextTransform("session", "source"), False)
                ),
                name="memory_session_order_idx",
            ),
        ),
    ]
