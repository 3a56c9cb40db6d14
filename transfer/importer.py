"""Read an export (transfer.export) into an organization, in one transaction: a file that is
malformed, cut short, hostile or in conflict with what the platform holds fails with the line and
what is wrong, and changes nothing.

Ids are kept (the round trip into an empty platform gives back the same rows) unless ``new_ids``
asks for new ones, as importing next to what the platform already holds needs; either way every
foreign key follows its row. People are found by username and made (without a password: they sign
in by a password reset or single sign-on) when the platform has none of that name. Memories whose
vectors were left out, or came from another embedding model, are stored pending and embedded by the
worker once the import commits.
"""

from __future__ import annotations

import math
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from django.core.exceptions import ValidationError
from django.core.management.color import no_style
from django.db import DatabaseError, connection, models, transaction
from django.utils import timezone

from memories import embedding_pipeline, trust
from memories.embeddings import get_provider
from memories.models import EMBEDDING_DIMENSIONS, EmbeddingStatus, Memory, MemoryVersion
from memories.search.caches import memories_changed
from memory_platform.exceptions import DomainError
from organizations.audit import audit_record
from organizations.models import ApiToken, Organization, Role, User
from organizations.principal import Principal
from organizations.services import validate_slug
from transfer import records
from transfer.lines import ImportProblem, Lines, read_manifest

BATCH = 500


@dataclass
class ImportResult:
    organization: Organization
    counts: dict[str, int]
    pending_embeddings: int


@dataclass
class _Pending:
    """Rows of one kind read and not yet written."""

    kind: records.Kind
    rows: list[tuple[int, models.Model, Any]] = field(default_factory=list)  # (line, row, old pk)


def import_organization(
    source: IO[bytes],
    *,
    slug: str,
    create: bool = False,
    new_ids: bool = False,
    progress: Callable[[str, int], None] | None = None,
    actor: Principal | None = None,
) -> ImportResult:
    """Import ``source`` into the organization ``slug`` (made, with ``create``); ``actor`` is who the
    audit names (an admin over REST; the host's operator by default)."""
    reader = Lines(source)
    manifest = read_manifest(*reader.next())
    with transaction.atomic():
        organization = _target(slug, create=create, manifest=manifest, new_ids=new_ids)
        state = _State(organization, manifest, new_ids=new_ids)
        for number, value in reader:
            kind = value.get("kind")
            if kind == "end":
                state.finish(number, value)
                state.audit(created=create, manifest=manifest, actor=actor)
                break
            state.add(number, value)
            if progress is not None and kind in records.BY_NAME:
                progress(str(kind), 1)
        else:
            raise ImportProblem("the file ends before its end record: it was cut short; export it again")
        if reader.next(required=False) is not None:
            raise ImportProblem("there is more after the end record", reader.number)
        pending = state.pending_embeddings
        if pending:
            transaction.on_commit(lambda: embedding_pipeline.schedule_backfill(pending))
    return ImportResult(organization=organization, counts=state.counts, pending_embeddings=len(pending))


def import_for(principal: Principal, source: IO[bytes], *, keep_ids: bool = False) -> ImportResult:
    """An admin's import into their own organization (the REST interface's): new ids unless asked,
    as the organization usually holds rows already."""
    principal.require(Role.ADMIN, "importing into the organization")
    return import_organization(source, slug=principal.organization.slug, new_ids=not keep_ids, actor=principal)


def _target(slug: str, *, create: bool, manifest: dict[str, Any], new_ids: bool) -> Organization:
    existing = Organization.objects.filter(slug=slug).first()
    if create:
        if existing is not None:
            raise ImportProblem(f"organization '{slug}' exists; leave out --create to import into it")
        try:
            validate_slug(slug, "organization")
        except DomainError as error:
            raise ImportProblem(error.message) from None
        # Its creation is audited with the import, once the file's own audit events have their ids.
        name = str(manifest["organization"].get("name") or slug)
        exported_id = manifest["organization"]["id"]
        if not new_ids and not Organization.objects.filter(pk=exported_id).exists():
            return Organization.objects.create(pk=exported_id, slug=slug, name=name)
        return Organization.objects.create(slug=slug, name=name)
    if existing is None:
        raise ImportProblem(f"no organization '{slug}'; add --create to make it")
    return existing


class _State:
    """What the import has read so far: where each exported id went, and what waits to be written."""

    def __init__(self, organization: Organization, manifest: dict[str, Any], *, new_ids: bool) -> None:
        self.organization = organization
        self.exported_organization = manifest["organization"]["id"]
        self.new_ids = new_ids
        self.ids: dict[type[models.Model], dict[str, Any]] = defaultdict(dict)  # old pk (as text) -> new pk
        self.counts: dict[str, int] = defaultdict(int)
        self.position = -1  # the last kind's place in records.KINDS: kinds come in that order
        self.pending: _Pending | None = None
        self.later: list[tuple[type[models.Model], Any, str, Any, int]] = []  # model, pk, attname, old target, line
        self.many: list[tuple[records.Kind, Any, str, list[Any], int]] = []
        self.pending_embeddings: list[str] = []
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
            person.save()
        self.ids[User][str(fields["id"])] = person.pk
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
        model = pending.kind.model
        if pending.kind.natural:
            pending.rows = self._new_only(pending)
            if not pending.rows:
                return
        rows = [row for _, row, _ in pending.rows]
        pk_name = model._meta.pk.attname
        if not self.new_ids and not model._meta.pk.is_relation:
            taken = model._default_manager.filter(pk__in=[getattr(row, pk_name) for row in rows])
            clash = taken.values_list("pk", flat=True).first()
            if clash is not None:
                number = next(n for n, row, _ in pending.rows if getattr(row, pk_name) == clash)
                raise ImportProblem(
                    f"a {pending.kind.name} with id {clash} exists on this platform; import with --new-ids", number
                )
        try:
            with transaction.atomic():
                created = model._default_manager.bulk_create(rows)
        except DatabaseError as error:
            first = pending.rows[0][0]
            raise ImportProblem(
                f"the {pending.kind.name} records from here on cannot be stored: {error}".strip(), first
            ) from None
        for (_, _, old_pk), row in zip(pending.rows, created, strict=True):
            self.ids[model][str(old_pk)] = row.pk
        if model is Memory:
            waiting = [row for row in created if getattr(row, "embedding_status", None) == EmbeddingStatus.PENDING]
            self.pending_embeddings += [str(row.pk) for row in waiting]

    def _new_only(self, pending: _Pending) -> list[tuple[int, models.Model, Any]]:
        """The rows the organization does not hold yet; the others become the rows it holds."""
        model = pending.kind.model
        fresh = []
        for number, row, old_pk in pending.rows:
            same = {name: getattr(row, name) for name in pending.kind.natural}
            if pending.kind.natural != ("organization_id",):
                same["organization_id"] = self.organization.pk
            held = model._default_manager.filter(**same).values_list("pk", flat=True).first()
            if held is None:
                fresh.append((number, row, old_pk))
            else:
                self.ids[model][str(old_pk)] = held
        return fresh

    def finish(self, number: int, value: dict[str, Any]) -> None:
        self._write()
        pointed: dict[tuple[type[models.Model], str], list[models.Model]] = defaultdict(list)
        for model, row, attname, target, line in self.later:
            mapped = self.ids[model].get(str(target))
            if mapped is None:
                raise ImportProblem(f"{attname} names {target!r}, which the file does not hold", line)
            setattr(row, attname, mapped)
            pointed[model, attname].append(row)
        for (model, attname), rows in pointed.items():
            model._default_manager.bulk_update(rows, [attname.removesuffix("_id")], batch_size=BATCH)
        for kind, row, name, related, line in self.many:
            f = kind.model._meta.get_field(name)
            mapped_ids = []
            for old in related:
                mapped = self.ids[f.related_model].get(str(old))  # type: ignore[index]
                if mapped is None:
                    raise ImportProblem(f"{kind.name}.{name} names {old!r}, which the file does not hold", line)
                mapped_ids.append(mapped)
            getattr(row, name).set(mapped_ids)  # the row as written (its id set by bulk_create)
        counts = value.get("counts")
        held = {name: n for name, n in self.counts.items() if n}
        if not isinstance(counts, dict) or {name: n for name, n in counts.items() if n} != held:
            raise ImportProblem(f"the end record counts {counts}, the file holds {held}: it was altered", number)
        if not self.new_ids:
            models_with_ids: list[type[models.Model]] = [Organization, *(kind.model for kind in records.KINDS)]
            with connection.cursor() as cursor:
                for statement in connection.ops.sequence_reset_sql(no_style(), models_with_ids):
                    cursor.execute(statement)
        memories_changed(self.organization.pk, created_only=True)

    def audit(self, *, created: bool, manifest: dict[str, Any], actor: Principal | None) -> None:
        operator = actor or Principal.for_operator(self.organization, "import")
        if created:
            named = {"slug": self.organization.slug, "name": self.organization.name}
            audit_record(principal=operator, action="organization.create", target_type="organization",
                         target_id=self.organization.pk, data=named)  # fmt: skip
        exported = {"organization": manifest["organization"], "exported_at": manifest.get("exported_at")}
        data: dict[str, Any] = {"counts": dict(self.counts), "new_ids": self.new_ids, "source": exported}
        audit_record(principal=operator, action="organization.import", target_type="organization",
                     target_id=self.organization.pk, data=data)  # fmt: skip


def _said(error: ValidationError) -> str:
    return "; ".join(error.messages)
