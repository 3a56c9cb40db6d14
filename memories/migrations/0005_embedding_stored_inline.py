# Embeddings stored in the row, not in the TOAST table.
#
# A memory row is ~2.2 kB, of which the 384-dimension vector is 1.5 kB: above PostgreSQL's 2 kB
# threshold, so the vector (storage EXTERNAL, pgvector's default) went out of line, and an exact
# scan of a tenant fetched every vector from TOAST (6k rows: 24 ms, against 7.2 ms inline).
# STORAGE MAIN keeps the vector in the row unless nothing else can go, and toast_tuple_target
# 4080 lets a row up to half a page stay whole (the text and tsvector stay inline too).
#
# Both apply to rows written from now on. Existing rows move only when rewritten: this migration
# rewrites the vectors of a table with at most REWRITE_LIMIT embedded rows. A larger table keeps
# working as before (only slower to scan); rewrite it in a maintenance window with
# `VACUUM FULL memories_memory` (locks the table; rebuilds its indexes) or pg_repack.

import sys

from django.db import migrations

REWRITE_LIMIT = 20_000


def rewrite_small_tables(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM (SELECT 1 FROM memories_memory WHERE embedding IS NOT NULL LIMIT %s) AS s",
            [REWRITE_LIMIT + 1],
        )
        (rows,) = cursor.fetchone()
        if rows > REWRITE_LIMIT:
            sys.stderr.write(
                f"\n  memories_memory has more than {REWRITE_LIMIT} embedded rows: their vectors stay out of line "
                "until rewritten. Run `VACUUM FULL memories_memory` (or pg_repack) in a maintenance window.\n"
            )
            return
        # A new value (not `embedding = embedding`, which keeps the TOAST pointer) is stored inline.
        cursor.execute(
            "UPDATE memories_memory SET embedding = embedding::real[]::vector WHERE embedding IS NOT NULL"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0004_access_counts_in_their_own_table"),
    ]

    operations = [
        migrations.RunSQL(
            sql="ALTER TABLE memories_memory ALTER COLUMN embedding SET STORAGE MAIN",
            reverse_sql="ALTER TABLE memories_memory ALTER COLUMN embedding SET STORAGE EXTERNAL",
        ),
        migrations.RunSQL(
            sql="ALTER TABLE memories_memory SET (toast_tuple_target = 4080)",
            reverse_sql="ALTER TABLE memories_memory RESET (toast_tuple_target)",
        ),
        migrations.RunPython(rewrite_small_tables, migrations.RunPython.noop),
    ]
