# The memories waiting for (or failed at) their embedding, in an index of their own. The health
# check, the metrics scrape, the status report, the curators' dashboard and the embedding sweep
# each counted or fetched them by reading every row of the table (95 ms at 100k memories, for every
# probe of a load balancer). Built concurrently, as the table may be large; a ready memory is not in
# it, so writes that embed at once do not pay for it.

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("memories", "0016_keys_name_the_organization"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("embedding_status__in", ["pending", "failed"])),
                fields=["organization", "embedding_status"],
                name="memory_embedding_waiting_idx",
            ),
        ),
    ]
