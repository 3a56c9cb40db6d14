"""Writes of code indexes: start a run over a directory, sync an agent's files in two steps
(manifest, then contents), delete an index. Runs themselves execute in pipeline.py.

One run per repository at a time: a new request replaces a run that is only waiting (for the agent's
files or for a worker), closes one whose worker died, and is refused (Conflict) while a worker is
at work, with its progress in the message.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from code_index.files import checked_relative_path, checked_root, default_ignore, ignored_by_default
from code_index.models import (
    CodeChunk,
    CodeFile,
    CodeIndex,
    CodeIndexRun,
    CodeUpload,
    RunPhase,
    RunStatus,
    Source,
    Trigger,
)
from code_index.pipeline import other_model_chunks
from code_index.recovery import close_stale_runs, lock_is_free
from code_index.selectors import code_index_get, code_repository
from memory_platform.exceptions import Conflict, ValidationError
from organizations.audit import audit_record
from organizations.models import Repository, Role
from organizations.principal import Principal

SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _enqueue(run_id: int) -> None:
    from code_index.tasks import code_index_run

    code_index_run.delay(run_id)


def _index_for_update(principal: Principal, repository: Repository) -> CodeIndex:
    index, _ = CodeIndex.objects.get_or_create(repository=repository, defaults={"organization": principal.organization})
    return CodeIndex.objects.select_for_update().get(pk=index.pk)


def _make_room(index: CodeIndex, principal: Principal) -> CodeIndexRun | None:
    """Clear the way for a new run; returns the run it replaced while that one only waited."""
    close_stale_runs(index=index)
    current = CodeIndexRun.objects.select_for_update().filter(index=index, status=RunStatus.INDEXING).first()
    if current is None:
        return None
    if current.phase == RunPhase.RUNNING and not lock_is_free(index.pk):
        raise Conflict(
            f"repository '{index.repository.slug}' is being indexed right now ({current.indexed_files} of "
            f"{current.total_files} files, started {current.started_at:%Y-%m-%d %H:%M:%S} UTC); wait until "
            "code-index-status says completed, then send again",
            details={"run_id": current.pk},
        )
    # Only waiting (or its worker died): the new request replaces it; a worker that takes it later
    # finds it closed.
    now = timezone.now()
    current.status, current.phase, current.completed_at = RunStatus.FAILED, RunPhase.FINISHED, now
    current.error = f"replaced by a newer request ({principal.label})"
    current.save(update_fields=["status", "phase", "completed_at", "error"])
    return current


def _new_run(index: CodeIndex, principal: Principal, **fields: object) -> CodeIndexRun:
    return CodeIndexRun.objects.create(
        organization=principal.organization, index=index, requested_by=principal.label, **fields
    )


# --- a directory on the server -----------------------------------------------------------------------------


@transaction.atomic
def code_index_path(*, principal: Principal, repository: str, path: object, watch: bool = False) -> CodeIndexRun:
    """Index a directory under CODE_INDEX_ROOTS into the repository's index, in the background;
    with ``watch``, beat re-scans it for changes."""
    principal.require(Role.AGENT, "indexing code")
    if not isinstance(watch, bool):
        raise ValidationError("watch must be true or false", details={"field": "watch"})
    target = code_repository(principal, repository)
    root = checked_root(path, principal.organization.slug)
    return _start_directory_run(principal, target, root, watch=watch, trigger=Trigger.PATH)


@transaction.atomic
def code_index_command(*, principal: Principal, repository: str, path: Path) -> CodeIndexRun:
    """The host operator's run (manage.py code_index): any directory, executed by the caller."""
    principal.require(Role.ADMIN, "indexing a directory from the host")
    target = code_repository(principal, repository)
    root = path.resolve()
    if not root.is_dir():
        raise ValidationError(f"{path} is not a directory", details={"field": "path"})
    return _start_directory_run(principal, target, root, watch=False, trigger=Trigger.COMMAND)


def _start_directory_run(
    principal: Principal, repository: Repository, root: Path, *, watch: bool, trigger: str
) -> CodeIndexRun:
    index = _index_for_update(principal, repository)
    _make_room(index, principal)
    index.source, index.root_path, index.watch = Source.PATH, str(root), watch
    index.save(update_fields=["source", "root_path", "watch"])
    run = _new_run(index, principal, trigger=trigger, phase=RunPhase.QUEUED, root_path=str(root))
    audit_record(
        principal=principal, action="code_index.start", target_type="code_index", target_id=index.pk,
        data={"repository": repository.slug, "source": "path", "path": str(root), "watch": watch, "run": run.pk},
    )  # fmt: skip
    if trigger != Trigger.COMMAND:
        run_id = run.pk
        transaction.on_commit(lambda: _enqueue(run_id))
    return run


# --- an agent's files: manifest, then contents --------------------------------------------------------------


@dataclass(frozen=True)
class ManifestAnswer:
    run: CodeIndexRun
    needed: list[str]  # every path the server needs the content of
    unchanged: int
    to_remove: int
    ignored: list[str]  # left out by the default ignore list (dependencies, build output, binaries…)


def _parsed_manifest(manifest: object) -> dict[str, str]:
    if not isinstance(manifest, Mapping):
        raise ValidationError(
            'manifest must be an object mapping each file path to the sha256 of its bytes, e.g. {"src/app.py": '
            '"9f86d0…"}',
            details={"field": "manifest"},
        )
    limit = settings.CODE_INDEX_MAX_FILES
    if len(manifest) > limit:
        raise ValidationError(
            f"manifest lists {len(manifest)} files; an index holds at most {limit}: leave out dependencies and "
            "build output, or index a subdirectory as its own repository",
            details={"field": "manifest"},
        )
    parsed: dict[str, str] = {}
    for raw_path, digest in manifest.items():
        try:
            path = checked_relative_path(raw_path)
        except ValidationError as error:
            raise ValidationError(error.message, details={"field": "manifest"}) from None
        if not isinstance(digest, str) or not SHA256.match(digest.lower()):
            raise ValidationError(
                f"manifest[{path!r}] must be the sha256 of the file's bytes as 64 hexadecimal characters",
                details={"field": "manifest"},
            )
        if path in parsed:
            raise ValidationError(f"manifest names {path!r} twice", details={"field": "manifest"})
        parsed[path] = digest.lower()
    return parsed


@transaction.atomic
def code_index_manifest(*, principal: Principal, repository: str, manifest: object) -> ManifestAnswer:
    """Step one of a sync: compare the agent's files with the index; the answer names those to send.
    Files the index holds that the manifest does not list are removed when the run completes."""
    principal.require(Role.AGENT, "indexing code")
    target = code_repository(principal, repository)
    entries = _parsed_manifest(manifest)
    spec = default_ignore()
    ignored = sorted(path for path in entries if ignored_by_default(path, spec))
    kept = {path: digest for path, digest in entries.items() if path not in set(ignored)}
    index = _index_for_update(principal, target)
    replaced = _make_room(index, principal)
    existing = dict(CodeFile.objects.filter(index=index).values_list("path", "content_hash"))
    # Files embedded by another model than the one configured now are asked for again.
    stale = set(other_model_chunks(index).values_list("path", flat=True))
    needed = sorted(path for path, digest in kept.items() if existing.get(path) != digest or path in stale)
    run = _new_run(
        index, principal, trigger=Trigger.MANIFEST, phase=RunPhase.RECEIVING if needed else RunPhase.QUEUED,
        manifest=kept, needed=needed, total_files=len(kept), unchanged=len(kept) - len(needed),
        indexed_files=len(kept) - len(needed),
    )  # fmt: skip
    if replaced is not None and needed:
        # What the agent already sent for the run this one replaces is not asked for twice.
        carried = [
            pk
            for pk, path, digest in CodeUpload.objects.filter(run=replaced, path__in=needed).values_list(
                "pk", "path", "content_hash"
            )
            if kept.get(path) == digest
        ]
        CodeUpload.objects.filter(pk__in=carried).update(run=run)
        if len(carried) == len(needed):
            run.phase = RunPhase.QUEUED
            run.save(update_fields=["phase"])
    index.source, index.root_path, index.watch = Source.FILES, "", False
    index.save(update_fields=["source", "root_path", "watch"])
    audit_record(
        principal=principal, action="code_index.start", target_type="code_index", target_id=index.pk,
        data={"repository": target.slug, "source": "files", "files": len(kept), "needed": len(needed), "run": run.pk},
    )  # fmt: skip
    if run.phase == RunPhase.QUEUED:
        run_id = run.pk
        transaction.on_commit(lambda: _enqueue(run_id))
    to_remove = sum(1 for path in existing if path not in kept)
    return ManifestAnswer(run, needed, len(kept) - len(needed), to_remove, ignored)


@dataclass(frozen=True)
class UploadAnswer:
    run: CodeIndexRun
    received: int  # in this call
    remaining: list[str]  # paths still to send


@dataclass(frozen=True)
class _Upload:
    path: str
    content: str
    digest: str
    size: int
    skipped: str


def _parsed_files(files: object, run: CodeIndexRun) -> list[_Upload]:
    """Every entry checked before anything is stored: a batch is taken whole or not at all."""
    max_files, max_bytes = settings.CODE_INDEX_UPLOAD_MAX_FILES, settings.CODE_INDEX_UPLOAD_MAX_BYTES
    if not isinstance(files, list) or not files:
        raise ValidationError(
            'files must be a non-empty list of {"path": ..., "content": ...} objects', details={"field": "files"}
        )
    if len(files) > max_files:
        raise ValidationError(
            f"{len(files)} files in one call; send at most {max_files} per call", details={"field": "files"}
        )
    manifest: dict[str, str] = run.manifest or {}
    needed = set(run.needed)
    parsed: list[_Upload] = []
    total = 0
    for entry in files:
        if not isinstance(entry, Mapping) or set(entry) != {"path", "content"} or not isinstance(entry["content"], str):
            raise ValidationError(
                'each file must be an object with exactly "path" and "content" (the file\'s text)',
                details={"field": "files"},
            )
        path = checked_relative_path(entry["path"])
        if path not in needed:
            raise ValidationError(
                f"{path!r} was not asked for: send only the paths the manifest's answer listed as needed",
                details={"field": "files", "path": path},
            )
        data = entry["content"].encode("utf-8", errors="surrogatepass")
        digest = hashlib.sha256(data).hexdigest()
        if digest != manifest[path]:
            raise ValidationError(
                f"the content of {path!r} does not match its sha256 in the manifest ({manifest[path][:12]}…, got "
                f"{digest[:12]}…): send the file's exact text, or send the manifest again if it changed",
                details={"field": "files", "path": path},
            )
        total += len(data)
        skipped = ""
        if "\x00" in entry["content"]:
            skipped = "binary"
        elif len(data) > settings.CODE_INDEX_MAX_FILE_BYTES:
            skipped = "too large"
        content = "" if skipped else entry["content"]
        parsed.append(_Upload(path, content, digest, len(data), skipped))
    if total > max_bytes:
        raise ValidationError(
            f"{total} bytes of content in one call; send at most {max_bytes} per call (split the batch)",
            details={"field": "files"},
        )
    if len({upload.path for upload in parsed}) != len(parsed):
        raise ValidationError("a path appears twice in this batch", details={"field": "files"})
    return parsed


@transaction.atomic
def code_index_upload(*, principal: Principal, repository: str, files: object, done: bool = False) -> UploadAnswer:
    """Step two of a sync: the contents of files the manifest's answer asked for, in batches. Once
    all have arrived (or ``done`` says no more will come), the run is queued for a worker."""
    principal.require(Role.AGENT, "indexing code")
    target = code_repository(principal, repository)
    if not isinstance(done, bool):
        raise ValidationError("done must be true or false", details={"field": "done"})
    run = (
        CodeIndexRun.objects.select_for_update()
        .filter(index__repository=target, status=RunStatus.INDEXING, phase=RunPhase.RECEIVING)
        .first()
    )
    if run is None:
        raise ValidationError(
            f"no sync of '{target.slug}' is waiting for files: send the manifest first (code-index with "
            "`manifest`); if you did, code-index-status says whether all files arrived or the run expired",
            details={"field": "files"},
        )
    uploads = _parsed_files(files, run) if files is not None or not done else []
    CodeUpload.objects.filter(run=run, path__in=[upload.path for upload in uploads]).delete()
    CodeUpload.objects.bulk_create(
        CodeUpload(
            run=run,
            organization_id=run.organization_id,
            path=u.path,
            content=u.content,
            content_hash=u.digest,
            size=u.size,
            skipped=u.skipped,
        )
        for u in uploads
    )
    arrived = set(CodeUpload.objects.filter(run=run).values_list("path", flat=True))
    remaining = [path for path in run.needed if path not in arrived]
    run.heartbeat_at = timezone.now()
    if not remaining or done:
        run.phase = RunPhase.QUEUED
        run_id = run.pk
        transaction.on_commit(lambda: _enqueue(run_id))
    run.save(update_fields=["heartbeat_at", "phase"])
    return UploadAnswer(run, len(uploads), remaining)


# --- delete -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeletedIndex:
    repository: str
    files: int
    chunks: int


@transaction.atomic
def code_index_delete(*, principal: Principal, repository: str) -> DeletedIndex:
    """Remove a repository's code index (files, chunks, runs). The repository and its memories stay."""
    principal.require(Role.AGENT, "deleting a code index")
    index = code_index_get(principal, repository)
    index = CodeIndex.objects.select_for_update().select_related("repository").get(pk=index.pk)
    running = CodeIndexRun.objects.filter(index=index, status=RunStatus.INDEXING, phase=RunPhase.RUNNING).exists()
    if running and not lock_is_free(index.pk):
        raise Conflict(
            f"repository '{index.repository.slug}' is being indexed right now; delete its index once the run ends "
            "(code-index-status)"
        )
    files = CodeFile.objects.filter(index=index).count()
    chunks = CodeChunk.objects.filter(organization=principal.organization, repository=index.repository).delete()[0]
    CodeFile.objects.filter(index=index).delete()
    slug, pk = index.repository.slug, index.pk
    index.delete()
    audit_record(
        principal=principal, action="code_index.delete", target_type="code_index", target_id=pk,
        data={"repository": slug, "files": files, "chunks": chunks},
    )  # fmt: skip
    return DeletedIndex(slug, files, chunks)
