"""Write an organization's memory as JSON Lines: a manifest, the people its rows name, every row of
``records.KINDS`` in order, and an end record with the counts (a file without it was cut short)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO, Any

from django.db import connection, transaction
from django.utils import timezone

from organizations.models import Organization, Role
from organizations.principal import Principal
from transfer import records

BATCH = 500


def export_organization(
    organization: Organization,
    out: IO[str],
    *,
    embeddings: bool = False,
    progress: Callable[[str, int], None] | None = None,
) -> dict[str, int]:
    """Write ``organization`` to ``out``; the counts of each kind written. One snapshot: the rows are
    read in one repeatable-read transaction, so writes made meanwhile are all in or all out."""
    counts: dict[str, int] = {}
    snapshot = not connection.in_atomic_block  # inside a caller's transaction, it is the snapshot
    with transaction.atomic():
        if snapshot:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        people = records.people_of(organization)
        planned = {"user": people.count(), **{kind.name: kind.rows(organization).count() for kind in records.KINDS}}
        _line(out, _manifest(organization, planned, embeddings=embeddings))
        counts["user"] = 0
        for person in people:
            fields = {"id": person.pk, **{name: getattr(person, name) for name in records.USER_FIELDS}}
            _line(out, {"kind": "user", "fields": fields})
            counts["user"] += 1
        for kind in records.KINDS:
            counts[kind.name] = 0
            rows = kind.rows(organization)
            if kind.many:
                rows = rows.prefetch_related(
                    *(records.Many.of(kind, name).prefetch(name, organization) for name in kind.many)
                )
            for row in rows.iterator(chunk_size=BATCH):
                _line(out, records.record(kind, row, embeddings=embeddings))
                counts[kind.name] += 1
                if progress is not None:
                    progress(kind.name, 1)
    _line(out, {"kind": "end", "counts": counts})
    return counts


def export_for(principal: Principal, out: IO[str], *, embeddings: bool = False) -> dict[str, int]:
    """An admin's export of their own organization (the REST interface's)."""
    principal.require(Role.ADMIN, "exporting the organization")
    return export_organization(principal.organization, out, embeddings=embeddings)


def _manifest(organization: Organization, planned: dict[str, int], *, embeddings: bool) -> dict[str, Any]:
    return {
        "kind": "manifest",
        "format": records.FORMAT,
        "version": records.VERSION,
        "exported_at": timezone.now().isoformat(),
        "organization": {"slug": organization.slug, "name": organization.name, "id": organization.pk},
        "embeddings": embeddings,
        "counts": planned,
    }


def _line(out: IO[str], value: dict[str, Any]) -> None:
    out.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")
