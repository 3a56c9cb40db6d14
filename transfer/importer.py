"""Read an export (transfer.export) into an organization.

Every file is checked whole before anything is written: a file that is malformed, cut short,
hostile or in conflict with what the platform holds fails with the line and what is wrong, and
changes nothing. It is then imported a chunk per transaction, each chunk recorded with where its
rows went (transfer.models), so that an import cut off (the process killed, the database gone
away) goes on from its last stored chunk when the same file is imported into the same organization
again. What needs every row to exist (keys between rows of one kind, many-to-many rows), the audit
event and the run's completion are written last, in one transaction. One import of an organization
runs at a time.

Ids are kept (the round trip into an empty platform gives back the same rows) unless ``new_ids``
asks for new ones, as importing next to what the platform already holds needs; either way every
foreign key follows its row. People are found by username and made (without a password: they sign
in by a password reset or single sign-on) when the platform has none of that name. Memories whose
vectors were left out, or came from another embedding model, are stored pending and embedded by the
worker once their chunk commits.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from django.db import transaction
from django.utils import timezone

from memories import embedding_pipeline
from memory_platform.db.locks import advisory_lock
from memory_platform.exceptions import Conflict, DomainError
from organizations.models import Organization, Role, User
from organizations.principal import Principal
from organizations.services import validate_slug
from transfer import records
from transfer.lines import ImportProblem, Lines, read_manifest
from transfer.models import ImportRun, ImportStatus
from transfer.state import ImportState

logger = logging.getLogger(__name__)

# Distinguishes the import's advisory lock (keyed by the organization) from the workers' ones.
LOCK_NAMESPACE = 0x1A7F
Progress = Callable[[str, int], None]


@dataclass
class ImportResult:
    organization: Organization
    counts: dict[str, int]
    pending_embeddings: int
    run: ImportRun
    # The line a resumed import went on from (0: it started from the top).
    resumed_from: int = 0


def import_organization(
    source: IO[bytes],
    *,
    slug: str,
    create: bool = False,
    new_ids: bool = False,
    progress: Progress | None = None,
    actor: Principal | None = None,
) -> ImportResult:
    """Import ``source`` (seekable: it is read twice) into the organization ``slug`` (made, with
    ``create``); ``actor`` is who the audit names (an admin over REST; the host's operator by
    default). An unfinished import of the same file into the organization is resumed."""
    digest = hashlib.file_digest(source, "sha256").hexdigest()  # type: ignore[arg-type]
    existing = Organization.objects.filter(slug=slug).first()
    unfinished = _unfinished(existing, digest)
    if unfinished is None:
        organization = _target(existing, slug, create=create, source=source, new_ids=new_ids)
        manifest, lines = _records(source)  # the check: every record read, nothing written
        checking = ImportState(organization, manifest, new_ids=new_ids)
        _feed(checking, lines, at_end=checking.finish)
        run = _start(organization, digest, new_ids=new_ids, create=create, actor=actor)
    else:
        run = unfinished
        logger.info("resuming import %s into %s after line %s", run.pk, slug, run.line)
    return _import(source, run, create=create and unfinished is None, progress=progress, actor=actor)


def import_for(principal: Principal, source: IO[bytes], *, keep_ids: bool = False) -> ImportResult:
    """An admin's import into their own organization (the REST interface's): new ids unless asked,
    as the organization usually holds rows already."""
    principal.require(Role.ADMIN, "importing into the organization")
    return import_organization(source, slug=principal.organization.slug, new_ids=not keep_ids, actor=principal)


def _unfinished(organization: Organization | None, digest: str) -> ImportRun | None:
    if organization is None:
        return None
    return (
        ImportRun.objects.filter(organization=organization, source_sha256=digest, status=ImportStatus.RUNNING)
        .order_by("-started_at")
        .first()
    )


def _target(
    existing: Organization | None, slug: str, *, create: bool, source: IO[bytes], new_ids: bool
) -> Organization:
    """The organization to import into: the one there is, or (``create``) an unsaved one to check against."""
    if not create:
        if existing is None:
            raise ImportProblem(f"no organization '{slug}'; add --create to make it")
        return existing
    if existing is not None:
        raise ImportProblem(f"organization '{slug}' exists; leave out --create to import into it")
    try:
        validate_slug(slug, "organization")
    except DomainError as error:
        raise ImportProblem(error.message) from None
    source.seek(0)
    manifest = read_manifest(*Lines(source).next())
    exported_id = manifest["organization"]["id"]
    organization = Organization(slug=slug, name=str(manifest["organization"].get("name") or slug))
    if not new_ids and not Organization.objects.filter(pk=exported_id).exists():
        organization.pk = exported_id
    return organization


def _start(
    organization: Organization, digest: str, *, new_ids: bool, create: bool, actor: Principal | None
) -> ImportRun:
    with transaction.atomic():
        if create:
            organization.save(force_insert=True)
        return ImportRun.objects.create(
            organization=organization, source_sha256=digest, new_ids=new_ids, started_by=actor.label if actor else ""
        )


def _import(
    source: IO[bytes], run: ImportRun, *, create: bool, progress: Progress | None, actor: Principal | None
) -> ImportResult:
    organization = run.organization
    resumed_from = run.line
    with advisory_lock(LOCK_NAMESPACE, organization.pk) as acquired:
        if not acquired:
            raise Conflict(f"organization '{organization.slug}' is being imported into right now; wait for it to end")
        manifest, lines = _records(source)
        state = ImportState(organization, manifest, new_ids=run.new_ids, run=run)

        def at_end(number: int, value: dict[str, Any]) -> None:
            state.finish(number, value)  # the last chunk in its own transaction, then the rest in this one
            with transaction.atomic():
                state.link()
                state.audit(created=create, manifest=manifest, actor=actor)
                ImportRun.objects.filter(pk=run.pk).update(status=ImportStatus.COMPLETED, finished_at=timezone.now())

        try:
            _feed(state, lines, at_end=at_end, progress=progress)
        except ImportProblem:
            # What the check could not see (a row the database refuses) stopped it: nothing stays.
            _take_back(run, created=create)
            raise
    run.refresh_from_db()
    pending = state.pending_embeddings
    if pending:
        embedding_pipeline.schedule_backfill(pending)
    return ImportResult(organization, dict(state.counts), len(pending), run, resumed_from)


def _take_back(run: ImportRun, *, created: bool) -> None:
    """Remove what ``run`` stored: the rows it made (newest kind first; of an organization it made,
    every row, then the organization) and the people it made. Rows the organization had stay."""
    made: dict[str, list[str]] = {}
    for model_label, new in run.ids.filter(created=True).values_list("model", "new"):
        made.setdefault(model_label, []).append(new)
    organization = run.organization
    with transaction.atomic():
        ImportRun.objects.filter(pk=run.pk).delete()
        for kind in reversed(records.KINDS):
            rows = kind.rows(organization)
            if not created:
                rows = rows.filter(
                    pk__in=[kind.model._meta.pk.to_python(pk) for pk in made.get(kind.model._meta.label, [])]
                )
            rows.delete()
        if created:
            organization.delete()
        User.objects.filter(pk__in=[int(pk) for pk in made.get(User._meta.label, [])]).delete()
    logger.warning("import %s refused by the database: what it had stored is removed", run.pk)


def _records(source: IO[bytes]) -> tuple[dict[str, Any], Iterator[tuple[int, dict[str, Any]]]]:
    """The file's manifest, and its records up to the end record (then nothing may follow)."""
    source.seek(0)
    reader = Lines(source)
    manifest = read_manifest(*reader.next())

    def rest() -> Iterator[tuple[int, dict[str, Any]]]:
        for number, value in reader:
            yield number, value
            if value.get("kind") == "end":
                if reader.next(required=False) is not None:
                    raise ImportProblem("there is more after the end record", reader.number)
                return
        raise ImportProblem("the file ends before its end record: it was cut short; export it again")

    return manifest, rest()


def _feed(
    state: ImportState,
    lines: Iterator[tuple[int, dict[str, Any]]],
    *,
    at_end: Callable[[int, dict[str, Any]], None],
    progress: Progress | None = None,
) -> None:
    for number, value in lines:
        kind = value.get("kind")
        if kind == "end":
            at_end(number, value)
            continue
        state.add(number, value)
        if progress is not None and kind in records.BY_NAME:
            progress(str(kind), 1)
