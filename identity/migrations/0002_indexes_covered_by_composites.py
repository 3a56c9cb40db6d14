"""Foreign-key indexes a composite index already leads with, dropped without a lock that holds up
writes (memory_platform.db.migration_ops.without_field_index)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from memory_platform.db.migration_ops import without_field_index


class Migration(migrations.Migration):
    atomic = False  # DROP INDEX CONCURRENTLY runs outside a transaction

    dependencies = [
        ("identity", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        without_field_index(
            migrations.AlterField(
                model_name="singlesignonmembership",
                name="user",
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="+",
                    to=settings.AUTH_USER_MODEL,
                ),
            ),
            "identity",
        ),
    ]
