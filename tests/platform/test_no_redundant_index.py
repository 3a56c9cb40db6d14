"""Every index of the platform's tables earns its writes: none is a leading part of another index
of the same table (what it finds, the longer one finds as fast), so an insert never maintains two
where one serves. Foreign keys get an index of their own by default; where a composite index
already leads with the key's column they say ``db_index=False`` (memory_platform.db.migration_ops).
"""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import connection

pytestmark = pytest.mark.django_db

# The project's own apps: Django's, the admin login guard's and the OAuth server's tables are theirs.
OWN_APPS = ("organizations", "memories", "knowledge", "lifecycle", "instructions", "code_index", "transfer", "identity")

# An index that leads another: same access method, its columns and operator classes the other's
# first ones, neither partial nor on expressions, and not unique (a unique index is a rule, not a
# speed-up).
LEADING = """
SELECT t.relname, a.relname, b.relname
FROM pg_index ia
JOIN pg_index ib ON ib.indrelid = ia.indrelid AND ib.indexrelid <> ia.indexrelid
JOIN pg_class a ON a.oid = ia.indexrelid
JOIN pg_class b ON b.oid = ib.indexrelid
JOIN pg_class t ON t.oid = ia.indrelid
WHERE t.relname = ANY(%s)
  AND NOT ia.indisunique AND ia.indpred IS NULL AND ib.indpred IS NULL
  AND ia.indexprs IS NULL AND ib.indexprs IS NULL
  AND a.relam = b.relam AND ia.indnatts <= ib.indnatts
  AND (ib.indkey::int2[])[0:ia.indnatts - 1] = (ia.indkey::int2[])[0:ia.indnatts - 1]
  AND (ib.indclass::oid[])[0:ia.indnatts - 1] = (ia.indclass::oid[])[0:ia.indnatts - 1]
ORDER BY 1, 2
"""


def _tables() -> list[str]:
    # Many-to-many tables Django makes itself (their key indexes are its own) are left out.
    return sorted(model._meta.db_table for label in OWN_APPS for model in apps.get_app_config(label).get_models())


def test_no_index_is_the_leading_part_of_another() -> None:
    with connection.cursor() as cursor:
        cursor.execute(LEADING, [_tables()])
        redundant = cursor.fetchall()

    assert redundant == [], "\n".join(f"{table}: {index} leads {longer}" for table, index, longer in redundant)


def test_the_check_finds_a_redundant_index() -> None:
    with connection.cursor() as cursor:
        cursor.execute('CREATE INDEX "extra_mention_org" ON "knowledge_mention" ("organization_id")')
        cursor.execute(LEADING, [_tables()])
        redundant = cursor.fetchall()

    assert redundant == [("knowledge_mention", "extra_mention_org", "mention_org_key_idx")]


def test_foreign_keys_keep_their_constraints() -> None:
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, "knowledge_mention")
    keys = {tuple(info["columns"]): info["foreign_key"] for info in constraints.values() if info["foreign_key"]}

    assert keys == {
        ("organization_id",): ("organizations_organization", "id"),
        # Within the organization (memory_platform.db.tenant_keys); Django's introspection names the first pair.
        ("memory_id", "organization_id"): ("memories_memory", "id"),
    }
