# Access counts leave memories_memory for a narrow table of their own: updating them in place was
# a non-HOT update of the wide row, re-inserting it into every index (HNSW included) on each flush.
# The counts are copied over, and back when reversed.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0003_recall_bundles'),
    ]

    operations = [
        migrations.CreateModel(
            name='MemoryAccess',
            fields=[
                ('memory', models.OneToOneField(editable=False, on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='access', serialize=False, to='memories.memory')),
                ('access_count', models.PositiveBigIntegerField(default=0, editable=False)),
                ('last_accessed_at', models.DateTimeField(blank=True, editable=False, null=True)),
            ],
            options={
                'verbose_name': 'memory access',
            },
        ),
        migrations.RunSQL(
            sql=(
                "INSERT INTO memories_memoryaccess (memory_id, access_count, last_accessed_at) "
                "SELECT id, access_count, last_accessed_at FROM memories_memory "
                "WHERE access_count > 0 OR last_accessed_at IS NOT NULL"
            ),
            reverse_sql=(
                "UPDATE memories_memory AS m SET access_count = a.access_count, last_accessed_at = a.last_accessed_at "
                "FROM memories_memoryaccess AS a WHERE a.memory_id = m.id"
            ),
        ),
        migrations.RemoveField(
            model_name='memory',
            name='access_count',
        ),
        migrations.RemoveField(
            model_name='memory',
            name='last_accessed_at',
        ),
    ]
