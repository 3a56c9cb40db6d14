"""What an import has read of a file so far: where each exported id went, what waits to be written,
and the writing itself, a chunk (up to BATCH rows of one kind) per transaction.

The same reading serves the check every file gets first (``run`` None: nothing is written, every
record is checked, foreign keys followed within the file) and the import (each chunk stored with
where its rows went, transfer.models.ImportedId, and the line it reached, so that an import cut off
goes on from there: chunks already stored are not written again, their ids read back).
"""

from __future__ import annotations

import math
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.color import no_style
from django.db import DatabaseError, connection, models, transaction
from django.utils import timezone

from memories import trust
from memories.embeddings import get_provider
from memories.models import EMBEDDING_DIMENSIONS, EmbeddingStatus, Memory, MemoryVersion
from memories.search.caches import memories_changed
from memories.written import TEXT_ONLY, text_written
from memory_platform.bulk import copy_insert
from memory_platform.exceptions import DomainError
from organizations.audit import audit_record
from organizations.models import ApiToken, Organization, User
from organizations.principal import Principal
from transfer import records
from transfer.lines import ImportProblem
from transfer.models import ImportedId, ImportRun

BATCH = 500


@dataclass
class _Pending:
    """Rows of one kind read and not yet written."""

    kind: records.Kind
    rows: list[tuple[int, models.Model, Any]] = field(default_factory=list)  # (line, row, old pk)


class ImportState:
    """What the import has read so far: where each exported id went, and what waits to be written.
    Without a ``run`` it only checks (``organization`` may then be unsaved, one --create would make)."""

    def __init__(
        self, organization: Organization, manifest: dict[str, Any], *, new_ids: bool, run: ImportRun | None = None
    ) -> None:
        self.organization = organization
        self.run = run
        self.stored_through = run.line if run is not None else 0
        self.run_id: Any = run.pk if run is not None else None
        self.exported_organization = manifest["organization"]["id"]
        self.new_ids = new_ids
        self.ids: dict[type[models.Model], dict[str, Any]] = defaultdict(dict)  # old pk (as text) -> new pk
        self.counts: dict[str, int] = defaultdict(int)
        self.seen: dict[type[models.Model], set[str]] = defaultdict(set)
        self.stand_ins = 0
        self.position = -1  # the last kind's place in records.KINDS: kinds come in that order
        self.pending: _Pending | None = None
        self.later: list[tuple[type[models.Model], Any, str, Any, int]] = []  # model, pk, attname, old target, line
        self.many: list[tuple[records.Kind, Any, str, list[Any], int]] = []
        self.pending_embeddings: list[str] = []
        self._links: tuple[dict[Any, list[models.Model]], dict[Any, list[models.Model]]] = ({}, {})
        self.model_name = get_provider().name
        self.policy = trust.write_policy_for(organization)

    # --- reading ---------------------------------------------------------------------------------

    def add(self, number: int, value: dict[str, Any]) -> None:
        kind_name = value["kind"]
        fields = value.get("fields")
        if not isinstance(fields, dict):
            raise ImportProblem(f'a {kind_name} record needs its "fields"', number)
        if kind_name == "user":
            self._user(number, fields)
            return
        kind = records.BY_NAME.get(kind_name)
        if kind is None:
            raise ImportProblem(f"unknown kind {kind_name!r}; known: user, {', '.join(records.BY_NAME)}", number)
        position = records.KINDS.index(kind)
        if position < self.position:
            raise ImportProblem(
                f"{kind_name} records must come before {records.KINDS[self.position].name} ones", number
            )
        if self.pending is not None and (self.pending.kind is not kind or len(self.pending.rows) >= BATCH):
            self._write()
        self.position = position
        if self.pending is None:
            self.pending = _Pending(kind)
        row, old_pk = self._row(number, kind, fields)
        seen = self.seen[kind.model]
        if str(old_pk) in seen:
            raise ImportProblem(f"a second {kind_name} with id {old_pk!r}", number)
        seen.add(str(old_pk))
        self.pending.rows.append((number, row, old_pk))
        self.counts[kind_name] += 1

    def _user(self, number: int, fields: dict[str, Any]) -> None:
        username = fields.get("username")
        if not isinstance(username, str) or not username or "id" not in fields:
            raise ImportProblem("a user record needs its id and username", number)
        person = User.objects.filter(username=username).first()
        if person is None:
            values = {name: fields[name] for name in records.USER_FIELDS if name in fields}
            person = User(**values)
            person.set_unusable_password()
            try:
                person.full_clean(exclude=["password"])
            except ValidationError as error:
                raise ImportProblem(f"user {username!r}: {_said(error)}", number) from None
            if self.run is not None:
                with transaction.atomic():
                    person.save()
                    ImportedId.objects.create(run_id=self.run_id, organization_id=self.organization.pk,
                                              model=User._meta.label, old=str(fields["id"]),
                                              new=str(person.pk))  # fmt: skip
        self.ids[User][str(fields["id"])] = person.pk if person.pk is not None else self._stand_in(User)
        self.counts["user"] += 1

    def _row(self, number: int, kind: records.Kind, fields: dict[str, Any]) -> tuple[models.Model, Any]:
        model = kind.model
        values = self._values(number, kind, fields)
        pk_field = model._meta.pk
        if self.new_ids and not pk_field.is_relation:
            values[pk_field.attname] = uuid.uuid4() if isinstance(pk_field, models.UUIDField) else None
        if model is Memory:
            self._embedding(values)
            self._screen(number, values, trust.TEXT_FIELDS)
        if model is MemoryVersion:
            snapshot = values.get("snapshot")
            if isinstance(snapshot, dict):
                self._screen(number, snapshot, trust.TEXT_FIELDS)
        if model is ApiToken and self.new_ids:
            # Beside the original its prefix is taken, and a copy must not let the original's secret
            # in: the token comes in revoked, under a new prefix, still naming what it wrote.
            values["prefix"] = ApiToken.generate()[1]
            values["revoked_at"] = values.get("revoked_at") or timezone.now()
        try:
            row = model(**values)
        except (TypeError, ValueError) as error:
            raise ImportProblem(f"a {kind.name} cannot be made of these fields: {error}", number) from None
        for name in kind.later:
            attname = f"{name}_id"
            if fields.get(attname) is not None:
                self.later.append((model, row, attname, fields[attname], number))
        for name in kind.many:
            related = fields.get(name) or []
            if not isinstance(related, list):
                raise ImportProblem(f"{kind.name}.{name} must be a list of ids", number)
            self.many.append((kind, row, name, related, number))
        return row, fields.get(pk_field.attname)

    def _values(self, number: int, kind: records.Kind, fields: dict[str, Any]) -> dict[str, Any]:
        """The row's field values on this platform: checked, converted, foreign keys followed."""
        known = {f.attname: f for f in records.fields_of(kind.model)}
        unknown = set(fields) - set(known) - set(kind.many)
        if unknown:
            raise ImportProblem(f"a {kind.name} has no field {sorted(unknown)[0]!r}", number)
        values: dict[str, Any] = {}
        for attname, f in known.items():
            if attname not in fields:
                continue
            raw = fields[attname]
            if f.is_relation:
                # A key to a row of the same kind is set once they all exist (``later``).
                deferred = f.name in kind.later
                values[attname] = None if deferred else self._follow(number, kind, f, raw)
                continue
            try:
                values[attname] = f.to_python(raw) if raw is not None else None
            except ValidationError as error:
                raise ImportProblem(f"{kind.name}.{attname}: {_said(error)}", number) from None
            except (TypeError, ValueError) as error:
                raise ImportProblem(f"{kind.name}.{attname}: {error}", number) from None
        return values

    def _screen(self, number: int, values: dict[str, Any], names: tuple[str, ...]) -> None:
        """Credentials are never stored, whatever a file holds: the organization's write policy
        refuses the file (or redacts them, as it says)."""
        present = {name: values[name] for name in names if values.get(name) not in (None, "", [], {})}
        if not present:
            return
        try:
            screened = trust.screen_credentials(present, self.policy, fields=tuple(present))
        except DomainError as error:
            raise ImportProblem(error.message, number) from None
        values.update(screened.data)

    def _follow(self, number: int, kind: records.Kind, f: models.Field[Any, Any], raw: Any) -> Any:
        """Where a foreign key points on this platform."""
        if raw is None:
            return None
        target = f.related_model
        if target is Organization:
            if raw != self.exported_organization:
                raise ImportProblem(f"a {kind.name} belongs to another organization ({raw!r})", number)
            return self.organization.pk
        mapped = self.ids[target].get(str(raw))  # type: ignore[index]
        if mapped is None:
            what = "user" if target is User else records.BY_MODEL[target].name  # type: ignore[index]
            raise ImportProblem(
                f"{kind.name}.{f.attname} names {what} {raw!r}, which the file does not hold (earlier)", number
            )
        return mapped

    def _embedding(self, values: dict[str, Any]) -> None:
        """Vectors of this platform's model are kept; others, and none, wait for the worker."""
        vector = values.get("embedding")
        well_formed = (
            isinstance(vector, list | tuple)
            and len(vector) == EMBEDDING_DIMENSIONS
            and all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in vector)
        )
        kept = well_formed and values.get("embedding_model") == self.model_name
        if not kept:
            values["embedding"] = None
            values["embedding_status"] = EmbeddingStatus.PENDING

    # --- writing ---------------------------------------------------------------------------------

    def _write(self) -> None:
        pending, self.pending = self.pending, None
        if pending is None or not pending.rows:
            return
        last_line = pending.rows[-1][0]
        if last_line <= self.stored_through:
            self._stored(pending)  # by the attempt this one resumes
            return
        model = pending.kind.model
        held: list[tuple[Any, Any]] = []
        if pending.kind.natural:
            pending.rows, held = self._new_only(pending)
        rows = [row for _, row, _ in pending.rows]
        pk_name = model._meta.pk.attname
        if rows and not self.new_ids and not model._meta.pk.is_relation:
            taken = model._default_manager.filter(pk__in=[getattr(row, pk_name) for row in rows])
            clash = taken.values_list("pk", flat=True).first()
            if clash is not None:
                number = next(n for n, row, _ in pending.rows if getattr(row, pk_name) == clash)
                raise ImportProblem(
                    f"a {pending.kind.name} with id {clash} exists on this platform; import with --new-ids", number
                )
        if self.run is None:  # checking only: rows keep their ids, or stand-ins for the ones to come
            for _, row, old_pk in pending.rows:
                self.ids[model][str(old_pk)] = row.pk if row.pk is not None else self._stand_in(model)
            return
        try:
            with transaction.atomic():
                # Ids of our own (UUIDs, not the database's): COPY streams the rows.
                if not getattr(model._meta.pk, "db_returning", False):
                    copy_insert(rows)
                    created = rows
                else:
                    created = model._default_manager.bulk_create(rows)
                self._record(pending, created, held, last_line)
        except DatabaseError as error:
            first = pending.rows[0][0] if pending.rows else last_line
            raise ImportProblem(
                f"the {pending.kind.name} records from here on cannot be stored: {error}".strip(), first
            ) from None
        if model is Memory:
            waiting = [row for row in created if getattr(row, "embedding_status", None) == EmbeddingStatus.PENDING]
            self.pending_embeddings += [str(row.pk) for row in waiting]

    def _stand_in(self, model: type[models.Model]) -> Any:
        """While checking, the id a row to be made stands under: one no row has (negative, or new)."""
        if isinstance(model._meta.pk, models.UUIDField):
            return uuid.uuid4()
        self.stand_ins -= 1
        return self.stand_ins

    def _record(
        self, pending: _Pending, created: list[models.Model], held: list[tuple[Any, Any]], last_line: int
    ) -> None:
        """Where the chunk's rows went, kept with the line it reached (in the chunk's transaction)."""
        model = pending.kind.model
        label = model._meta.label
        went = [(old_pk, row.pk, True) for (_, _, old_pk), row in zip(pending.rows, created, strict=True)]
        went += [(old_pk, pk, False) for old_pk, pk in held]
        for old_pk, pk, _ in went:
            self.ids[model][str(old_pk)] = pk
        ImportedId.objects.bulk_create(
            [
                ImportedId(
                    run_id=self.run_id,
                    organization_id=self.organization.pk,
                    model=label,
                    old=str(old),
                    new=str(new),
                    created=made,
                )
                for old, new, made in went
            ]
        )
        ImportRun.objects.filter(pk=self.run_id).update(line=last_line)

    def _stored(self, pending: _Pending) -> None:
        """A chunk the attempt this one resumes stored: its rows' ids read back, not written again."""
        model = pending.kind.model
        stored = dict(
            ImportedId.objects.filter(
                run=self.run, model=model._meta.label, old__in=[str(old) for _, _, old in pending.rows]
            ).values_list("old", "new")
        )
        pk_field = model._meta.pk
        for number, row, old_pk in pending.rows:
            new = stored.get(str(old_pk))
            if new is None:
                raise ImportProblem(
                    "the import this one resumes did not record this row: import into a new organization", number
                )
            row.pk = pk_field.to_python(new)
            self.ids[model][str(old_pk)] = row.pk

    def _new_only(self, pending: _Pending) -> tuple[list[tuple[int, models.Model, Any]], list[tuple[Any, Any]]]:
        """The rows the organization does not hold yet, and (old pk, pk) of those it holds, which the
        file's rows become."""
        model = pending.kind.model
        fresh, held = [], []
        for number, row, old_pk in pending.rows:
            same = {name: getattr(row, name) for name in pending.kind.natural}
            if pending.kind.natural != ("organization_id",):
                same["organization_id"] = self.organization.pk
            found = model._default_manager.filter(**same).values_list("pk", flat=True).first()
            if found is None:
                fresh.append((number, row, old_pk))
            else:
                held.append((old_pk, found))
                self.ids[model][str(old_pk)] = found
        return fresh, held

    def finish(self, number: int, value: dict[str, Any]) -> None:
        """The end record: the last chunk written and the counts checked; what waited for every row to
        exist (keys to rows of the same kind, many-to-many rows) found, for ``link`` to write."""
        self._write()
        counts = value.get("counts")
        held = {name: n for name, n in self.counts.items() if n}
        if not isinstance(counts, dict) or {name: n for name, n in counts.items() if n} != held:
            raise ImportProblem(f"the end record counts {counts}, the file holds {held}: it was altered", number)
        pointed: dict[tuple[type[models.Model], str], list[models.Model]] = defaultdict(list)
        for model, row, attname, target, line in self.later:
            mapped = self.ids[model].get(str(target))
            if mapped is None:
                raise ImportProblem(f"{attname} names {target!r}, which the file does not hold", line)
            setattr(row, attname, mapped)
            pointed[model, attname].append(row)
        pairs: dict[Any, list[models.Model]] = defaultdict(list)  # through model -> its rows
        for kind, row, name, related, line in self.many:
            many = records.Many.of(kind, name)
            for old in dict.fromkeys(related):
                mapped = self.ids[many.related].get(str(old))
                if mapped is None:
                    raise ImportProblem(f"{kind.name}.{name} names {old!r}, which the file does not hold", line)
                # The row as written: its id was set by bulk_create (or read back).
                values = {
                    f"{many.source}_id": row.pk,
                    f"{many.target}_id": mapped,
                    "organization_id": self.organization.pk,
                }
                pairs[many.through].append(many.through(**values))
        self._links = (pointed, pairs)

    def link(self) -> None:
        """Write what waited for every row to exist (after ``finish``, in the caller's transaction)."""
        pointed, pairs = self._links
        for (model, attname), rows in pointed.items():
            model._default_manager.bulk_update(rows, [attname.removesuffix("_id")], batch_size=BATCH)
        for through, rows in pairs.items():
            through._default_manager.bulk_create(rows, batch_size=BATCH)
        if not self.new_ids:
            models_with_ids: list[type[models.Model]] = [Organization, *(kind.model for kind in records.KINDS)]
            with connection.cursor() as cursor:
                for statement in connection.ops.sequence_reset_sql(no_style(), models_with_ids):
                    cursor.execute(statement)
        memories_changed(self.organization.pk, created_only=True)
        # What the knowledge app derives from a memory's text is made again, never carried.
        imported = list(self.ids[Memory].values())
        for start in range(0, len(imported), BATCH):
            chunk = Memory.objects.filter(pk__in=imported[start : start + BATCH]).only(*TEXT_ONLY)
            text_written(self.organization.pk, list(chunk), created=True)

    def audit(self, *, created: bool, manifest: dict[str, Any], actor: Principal | None) -> None:
        operator = actor or Principal.for_operator(self.organization, "import")
        if created:
            named = {"slug": self.organization.slug, "name": self.organization.name}
            audit_record(principal=operator, action="organization.create", target_type="organization",
                         target_id=self.organization.pk, data=named)  # fmt: skip
        exported = {"organization": manifest["organization"], "exported_at": manifest.get("exported_at")}
        data: dict[str, Any] = {"counts": dict(self.counts), "new_ids": self.new_ids, "source": exported,
                                "run": str(self.run.pk) if self.run else None}  # fmt: skip
        audit_record(principal=operator, action="organization.import", target_type="organization",
                     target_id=self.organization.pk, data=data)  # fmt: skip


def _said(error: ValidationError) -> str:
    return "; ".join(error.messages)
