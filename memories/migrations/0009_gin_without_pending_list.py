# The memories' GIN indexes (full text, tags, metadata) without a pending list. With fastupdate on,
# PostgreSQL puts a write's index entries in a list that every search reading the index scans in
# full until a vacuum (or 4 MB of them) merges it: at 10k memories, 2.6k pending entries made the
# keyword query's index scan 8 times slower (1.6 ms against 0.2). Without the list, a write adds its
# entries to the index itself.
#
# ALTER INDEX ... SET is instant and keeps the index (rebuilding it, as removing and adding it
# would, locks writes while a large table is read); the entries already pending are merged here.

from django.contrib.postgres.indexes import GinIndex
from django.db import migrations

INDEXES = [
    ("memory_tags_gin", {"fields": ["tags"]}),
    ("memory_metadata_gin", {"fields": ["metadata"], "opclasses": ["jsonb_path_ops"]}),
    ("memory_search_vector_gin", {"fields": ["search_vector"]}),
]


def _without_pending_list() -> list[migrations.operations.base.Operation]:
    """The indexes as the models now declare them (fastupdate=False), for the migration state."""
    operations: list[migrations.operations.base.Operation] = []
    for name, options in INDEXES:
        operations.append(migrations.RemoveIndex(model_name="memory", name=name))
        operations.append(migrations.AddIndex(model_name="memory", index=GinIndex(name=name, fastupdate=False, **options)))
    return operations


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0008_memory_session_order_index"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=_without_pending_list(),
            database_operations=[
                migrations.RunSQL(
                    sql=[f"ALTER INDEX {name} SET (fastupdate = off)" for name, _ in INDEXES]
                    + [f"SELECT gin_clean_pending_list('{name}'::regclass)" for name, _ in INDEXES],
                    reverse_sql=[f"ALTER INDEX {name} RESET (fastupdate)" for name, _ in INDEXES],
                ),
            ],
        ),
    ]
