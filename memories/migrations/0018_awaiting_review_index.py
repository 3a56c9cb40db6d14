# What waits for review (a draft, or an active memory the write policy flagged), in the queue's
# order. The review queue, and its count on every admin page a curator opens, read an organization's
# drafts and every one of its active memories to find the flagged few (35 ms for the count at a
# 13.7k-memory organization). Built concurrently, as the table may be large; a reviewed memory is
# not in it.

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("memories", "0017_embedding_waiting_index"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                condition=models.Q(
                    models.Q(
                        ("status", "draft"),
                        models.Q(("status", "active"), models.Q(("review_flags", []), _negated=True)),
                        _connector="OR",
                    ),
                    ("deleted_at__isnull", True),
                    ("superseded_by__isnull", True),
                ),
                fields=["organization", "-importance", "-created_at"],
                include=("scope_type", "owner"),
                name="memory_awaiting_review_idx",
            ),
        ),
    ]
