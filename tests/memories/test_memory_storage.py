"""How memories are stored.

Embeddings are in the memory's row (STORAGE MAIN, toast_tuple_target 4080), so an exact scan does
not fetch every vector from the TOAST table; they are written as text that gives back the same
float4 values; and the memory table has only the indexes reads need, since each one costs every write.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.db import connection

from memories.models import Memory
from tests.conftest import MemoryFactory


def test_the_embedding_column_is_stored_main(db: Any) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attstorage FROM pg_attribute WHERE attrelid = 'memories_memory'::regclass AND attname = 'embedding'"
        )
        assert cursor.fetchone()[0] == "m"
        cursor.execute("SELECT reloptions FROM pg_class WHERE oid = 'memories_memory'::regclass")
        assert "toast_tuple_target=4080" in cursor.fetchone()[0]


def test_a_memory_is_written_without_toast(make_memory: MemoryFactory) -> None:
    memory = make_memory(current_content="A memory of ordinary length. " * 12, tags=["storage"])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_size(embedding), pg_total_relation_size(reltoastrelid) FROM memories_memory, pg_class "
            "WHERE memories_memory.id = %s AND pg_class.oid = 'memories_memory'::regclass",
            [memory.pk],
        )
        vector_bytes, toast_bytes = cursor.fetchone()
    assert vector_bytes > 1500  # the vector itself (a TOAST pointer would be 18 bytes, compressed less)
    # Nothing went to the TOAST table (an empty one has just its index page).
    assert toast_bytes <= 8192 * 2


def test_the_stored_vector_is_exactly_the_float4_of_the_embedding(make_memory: MemoryFactory) -> None:
    memory = make_memory(current_content="Invoices are due 30 days after issue.")
    rng = np.random.default_rng(7)
    vector = rng.standard_normal(384).astype(np.float32)
    vector[:3] = [1e-38, -3.4e38, 0.1]  # tiny, huge, and a value float4 cannot hold exactly
    Memory.objects.filter(pk=memory.pk).update(embedding=vector.tolist())

    stored = Memory.objects.get(pk=memory.pk).embedding

    assert np.array_equal(np.array(stored, dtype=np.float32), vector)


def test_the_memory_table_has_only_the_indexes_reads_need(db: Any) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT regexp_replace(indexdef, '^.* USING ', '') FROM pg_indexes "
            "WHERE tablename = 'memories_memory' ORDER BY 1"
        )
        indexes = [row[0] for row in cursor.fetchall()]
    # A foreign key added later brings its own index unless it says db_index=False: decide, then update.
    assert indexes == [
        # The primary key, which references within the organization name (memory_platform.db.tenant_keys,
        # tenant_unique): a lookup by id alone reads it too, so there is no index on the id alone.
        "btree (id, organization_id)",
        "btree (organization_id, ((source ->> 'session'::text)), created_at) "
        "WHERE ((source ->> 'session'::text) IS NOT NULL)",
        "btree (organization_id, embedding_status) "
        "WHERE ((embedding_status)::text = ANY "
        "((ARRAY['pending'::character varying, 'failed'::character varying])::text[]))",
        "btree (organization_id, idempotency_key) WHERE (idempotency_key IS NOT NULL)",
        "btree (organization_id, importance DESC, created_at DESC)",
        "btree (organization_id, importance DESC, created_at DESC) INCLUDE (scope_type, owner_id) "
        "WHERE ((((status)::text = 'draft'::text) OR (((status)::text = 'active'::text) "
        "AND (NOT (review_flags = '[]'::jsonb)))) AND (deleted_at IS NULL) AND (superseded_by_id IS NULL))",
        "btree (organization_id, repository_id)",
        "btree (organization_id, status)",
        "btree (owner_id)",
        "btree (repository_id)",
        "btree (scope_type) WHERE ((scope_type)::text = 'system'::text)",
        "btree (superseded_by_id)",
        "gin (metadata jsonb_path_ops) WITH (fastupdate=off)",
        "gin (tags) WITH (fastupdate=off)",
    ]
    # No search index over every organization's rows: a large organization gets its own HNSW and
    # full-text indexes (memories.search.tenant_indexes; tests/search/test_search_tenant_indexes.py).
