# The HNSW index is built concurrently so adding it to a large table does not block writes.

import pgvector.django.indexes
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("memories", "0001_memory_and_versions"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="memory",
            index=pgvector.django.indexes.HnswIndex(
                ef_construction=64,
                fields=["embedding"],
                m=16,
                name="memory_embedding_hnsw",
                opclasses=["vector_cosine_ops"],
            ),
        ),
    ]
