# The shared search indexes give way to each large organization's own (memories.search.tenant_indexes).
#
# Online, in order: first every organization that is due gets its own HNSW and GIN indexes, built
# concurrently (writes and searches go on, and from the moment each is valid its organization's
# searches use it); then the shared HNSW and GIN indexes are dropped concurrently. No row moves.
# Backwards, the shared indexes are built again (concurrently) and the organizations' own are kept.

from django.contrib.postgres.operations import RemoveIndexConcurrently
from django.db import migrations


def build_own_indexes(apps, schema_editor):  # type: ignore[no-untyped-def]
    from memories.search import tenant_indexes

    tenant_indexes.sweep()


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("memories", "0010_provenance_review_and_write_policy"),
    ]

    operations = [
        migrations.RunPython(build_own_indexes, migrations.RunPython.noop, elidable=True),
        RemoveIndexConcurrently(model_name="memory", name="memory_embedding_hnsw"),
        RemoveIndexConcurrently(model_name="memory", name="memory_search_vector_gin"),
    ]
