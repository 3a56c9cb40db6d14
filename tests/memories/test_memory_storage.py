"""Embeddings are stored in the memory's row (STORAGE MAIN, toast_tuple_target 4080), so an exact
scan does not fetch every vector from the TOAST table."""

from __future__ import annotations

from typing import Any

from django.db import connection

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
