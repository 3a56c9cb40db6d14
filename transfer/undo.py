"""Undo an import: the rows it made are taken out again, as long as nothing made since depends on them.

An import records every row it made (transfer.models.ImportedId), so its undo knows exactly what to
remove: rows it found the organization already had stay, and so does the organization, even one
the import created. It is refused, saying what stands in the way, while anything the import did not
make points at what it made (a link an agent added to an imported memory, a new version of one, a
proposal naming one): that work is not the import's to take back. The undo is audited with who,
why, the file's SHA-256 and what it removed; importing the same file again brings it all back.
"""

from __future__ import annotations

from typing import Any

from django.db import models, transaction
from django.utils import timezone

from memory_platform.exceptions import Conflict, NotFound
from organizations.audit import audit_record
from organizations.models import User
from organizations.principal import Principal
from transfer import records
from transfer.models import ImportRun, ImportStatus

TO_UNDO = (*reversed(records.KINDS),)
# Counts kept about a row rather than work done with it (how often a memory was read): they go with
# the row and never hold an undo back.
DERIVED = ("memory_access",)


def import_undo(run_id: object, *, reason: str, actor: Principal | None = None) -> dict[str, int]:
    """Remove what import ``run_id`` made; how many rows of each kind. ``actor`` is who the audit
    names (the host's operator by default)."""
    run = ImportRun.objects.select_related("organization").filter(pk=_uuid(run_id)).first()
    if run is None:
        raise NotFound(f"no import {run_id}; `manage.py import_organization` prints the id of each import")
    if run.status != ImportStatus.COMPLETED:
        raise Conflict(f"import {run.pk} is {run.status}: only a completed import is undone")
    made = _made(run)
    blocking = _dependents(run, made)
    if blocking:
        raise Conflict(
            f"import {run.pk} cannot be undone: {'; '.join(blocking[:3])}. Undo or retire that work first, "
            "or keep the import"
        )
    removed: dict[str, int] = {}
    with transaction.atomic():
        for kind in TO_UNDO:
            pks = made.get(kind.model, [])
            if pks:
                kind.model._default_manager.filter(pk__in=pks).delete()
                removed[kind.name] = len(pks)
        people = made.get(User, [])
        if people:
            User.objects.filter(pk__in=people).delete()
            removed["user"] = len(people)
        ImportRun.objects.filter(pk=run.pk).update(status=ImportStatus.UNDONE, finished_at=timezone.now())
        operator = actor or Principal.for_operator(run.organization, "import undo")
        data: dict[str, Any] = {"run": str(run.pk), "source_sha256": run.source_sha256, "removed": removed}
        audit_record(principal=operator, action="organization.import_undo", target_type="organization",
                     target_id=run.organization_id, reason=reason, data=data)  # fmt: skip
    return removed


def _uuid(value: object) -> Any:
    try:
        return ImportRun._meta.pk.to_python(value)
    except Exception:
        raise NotFound(f"no import {value}: an import's id is a UUID") from None


def _made(run: ImportRun) -> dict[type[models.Model], list[Any]]:
    """The rows ``run`` made, by model (not those it found the organization had)."""
    by_label = {kind.model._meta.label: kind.model for kind in records.KINDS} | {User._meta.label: User}
    made: dict[type[models.Model], list[Any]] = {}
    for label, new in run.ids.filter(created=True).values_list("model", "new"):
        model = by_label[label]
        made.setdefault(model, []).append(model._meta.pk.to_python(new))
    return made


def _dependents(run: ImportRun, made: dict[type[models.Model], list[Any]]) -> list[str]:
    """What the import did not make that points at what it made: every foreign key and
    many-to-many field of every kind of row, and the people's other organizations."""
    found: list[str] = []
    for kind in records.KINDS:
        if kind.name in DERIVED:
            continue
        own = set(made.get(kind.model, []))
        for f in kind.model._meta.get_fields():
            target = getattr(f, "related_model", None)
            if target not in made or not (f.many_to_one or f.one_to_one or f.many_to_many) or f.auto_created:
                continue
            if f.many_to_many:  # its own table's rows, not a join through them
                many = records.Many.of(kind, f.name)
                rows = many.rows(run.organization).filter(**{f"{many.target}__in": made[target]})
                first = rows.exclude(**{f"{many.source}__in": own}).values_list(many.source, flat=True).first()
            else:
                rows = kind.model._default_manager.filter(**{f"{f.name}__in": made[target]}).exclude(pk__in=own)
                first = rows.values_list("pk", flat=True).first()
            if first is not None:
                found.append(f"{kind.name} {first}, made after the import, names an imported {f.name}")
    people = made.get(User, [])
    elsewhere = User.objects.filter(pk__in=people, memberships__isnull=False).exclude(
        memberships__organization_id=run.organization_id
    )
    for username in elsewhere.values_list("username", flat=True)[:3]:
        found.append(f"{username}, whom the import made, is a member of another organization now")
    return found
