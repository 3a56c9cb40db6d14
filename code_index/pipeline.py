"""Index runs: what the Celery task, beat's watch re-scans and ``manage.py code_index`` execute.

A run holds a PostgreSQL advisory lock on its repository's index for as long as it works, so two
runs of one repository never write at once, across processes and machines; the server drops the
lock when the worker's connection dies. It works in batches of files, one transaction each, so a
run cut off half-way leaves whole files, old or new, never a file half-written; and since every
file is hashed, the next run finds the finished batches unchanged and picks up where it stopped.

A run left ``indexing`` by a worker that died is handed to a worker again or closed
(code_index/recovery.py), so a crashed run never keeps a repository locked.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from code_index.files import FoundFile, checked_root, decoded, is_binary_name, walk
from code_index.languages import language_of
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
from code_index.recovery import close_stale_runs, repository_lock
from code_index.writer import (
    FileWork,
    merge_pending_keywords,
    refresh_totals,
    remove_files,
    touch_files,
    write_files,
)
from memories.embeddings import EmbeddingError, get_provider
from memory_platform.exceptions import DomainError

logger = logging.getLogger(__name__)

BATCH_FILES = 25
Progress = Callable[[CodeIndexRun], None]


class Busy(Exception):
    """Another process holds the repository's lock (a watch re-scan): try again shortly."""


class RunError(Exception):
    """A run cannot go on; the message says why and what to do."""


class _Closed(Exception):
    """The run was closed by someone else while it worked (see close_stale_runs)."""


def run_index(run_id: int, *, progress: Progress | None = None) -> CodeIndexRun | None:
    """Execute (or resume) a queued run. None when it is not there to run: finished, closed, still
    waiting for files. Raises Busy when another process holds the repository's lock."""
    run = CodeIndexRun.objects.filter(pk=run_id).first()
    if run is None or run.status != RunStatus.INDEXING or run.phase == RunPhase.RECEIVING:
        return None
    with repository_lock(run.index_id) as acquired:
        if not acquired:
            raise Busy(f"index {run.index_id} is being written by another process")
        started = (
            CodeIndexRun.objects.filter(pk=run_id, status=RunStatus.INDEXING)
            .exclude(phase=RunPhase.RECEIVING)
            .update(phase=RunPhase.RUNNING, heartbeat_at=timezone.now())
        )
        if not started:
            return None
        run = CodeIndexRun.objects.select_related("index__repository", "organization").get(pk=run_id)
        return _execute(run, progress)


def _execute(run: CodeIndexRun, progress: Progress | None) -> CodeIndexRun:
    # A resumed run counts again from the start: what its first attempt wrote is now unchanged.
    for name in ("indexed_files", "skipped_files", "added", "modified", "removed", "unchanged", "chunks_written",
                 "embeddings_computed", "embeddings_reused"):  # fmt: skip
        setattr(run, name, 0)
    try:
        if run.trigger == Trigger.MANIFEST:
            _index_uploads(run, progress)
        else:
            _index_directory(run, progress)
    except _Closed:
        run.refresh_from_db()
        return run
    except (DomainError, RunError, EmbeddingError, OSError) as error:
        _finish(run, RunStatus.FAILED, _describe(error))
    except Exception as error:
        logger.exception("code index run %s failed", run.pk)
        _finish(run, RunStatus.FAILED, _describe(error))
    else:
        _finish(run, RunStatus.COMPLETED)
    return run


def _describe(error: Exception) -> str:
    if isinstance(error, DomainError):
        return error.message
    if isinstance(error, EmbeddingError):
        return f"the embedding provider failed: {error}. What was indexed before stays; run the index again later"
    if isinstance(error, RunError):
        return str(error)
    return f"{type(error).__name__}: {error}"


# --- a directory ---------------------------------------------------------------------------------------


def _read(found: FoundFile) -> FileWork:
    language = language_of(found.path)
    work = FileWork(found.path, language, "", found.size, found.mtime_ns)
    if found.size > settings.CODE_INDEX_MAX_FILE_BYTES:
        work.skipped = "too large"
        return work
    try:
        data = found.absolute.read_bytes()
    except OSError as error:
        work.skipped = f"unreadable: {error.strerror or error}"[:64]
        return work
    work.content_hash = hashlib.sha256(data).hexdigest()
    work.size = len(data)
    work.text = decoded(data)
    if work.text is None:
        work.skipped = "binary"
    return work


def other_model_chunks(index: CodeIndex) -> QuerySet[CodeChunk]:
    """The index's chunks embedded by another model than the one configured now (EMBEDDING_PROVIDER
    changed): their files are indexed again, whatever their hashes say."""
    return CodeChunk.objects.filter(organization_id=index.organization_id, repository_id=index.repository_id).exclude(
        embedding_model=get_provider().name
    )


def _listing(root: Path) -> list[FoundFile]:
    limit = settings.CODE_INDEX_MAX_FILES
    found = list(itertools.islice((f for f in walk(root) if not is_binary_name(f.path)), limit + 1))
    if len(found) > limit:
        raise RunError(
            f"{root} holds more than {limit} files to index: index a subdirectory, leave some out with a "
            ".gitignore, or raise CODE_INDEX_MAX_FILES"
        )
    return found


def _root(run: CodeIndexRun) -> Path:
    if run.trigger != Trigger.COMMAND:
        # Checked again at every run: the operator may have changed CODE_INDEX_ROOTS since.
        return checked_root(run.root_path, run.organization.slug)
    root = Path(run.root_path)
    if not root.is_dir():
        raise RunError(f"{root} is not a directory (any more)")
    return root


def _index_directory(run: CodeIndexRun, progress: Progress | None) -> None:
    index = run.index
    found = _listing(_root(run))
    run.total_files = len(found)
    run.save(update_fields=["total_files"])
    existing = {
        path: (pk, content_hash, size, mtime_ns, skipped)
        for pk, path, content_hash, size, mtime_ns, skipped in CodeFile.objects.filter(index=index).values_list(
            "pk", "path", "content_hash", "size", "mtime_ns", "skipped"
        )
    }
    ids = {path: values[0] for path, values in existing.items()}
    stale = set(other_model_chunks(index).values_list("file_id", flat=True))
    touched: dict[int, int] = {}
    batch: list[FileWork] = []
    for file in found:
        old = existing.get(file.path)
        current = old is not None and old[0] not in stale  # not embedded by another model
        if current and old is not None and (old[2], old[3]) == (file.size, file.mtime_ns):
            run.unchanged += 1
            continue
        work = _read(file)
        if current and old is not None and (old[1], old[4]) == (work.content_hash, work.skipped) and work.content_hash:
            touched[old[0]] = file.mtime_ns  # touched, not changed
            run.unchanged += 1
            continue
        batch.append(work)
        if len(batch) >= BATCH_FILES:
            _write(run, batch, ids, progress)
            batch = []
    _write(run, batch, ids, progress)
    if touched:
        touch_files(touched)
    seen = {file.path for file in found}
    run.removed = remove_files(index, [path for path in existing if path not in seen])


# --- an agent's files (manifest sync) ---------------------------------------------------------------------


def _index_uploads(run: CodeIndexRun, progress: Progress | None) -> None:
    index = run.index
    manifest: dict[str, str] = run.manifest or {}
    needed = set(run.needed)
    ids = dict(CodeFile.objects.filter(index=index).values_list("path", "pk"))
    run.total_files = len(manifest)
    run.unchanged = len(manifest) - len(needed)
    upload_ids = list(CodeUpload.objects.filter(run=run).order_by("path").values_list("pk", flat=True))
    sent: set[str] = set()
    for start in range(0, len(upload_ids), BATCH_FILES):
        uploads = CodeUpload.objects.filter(pk__in=upload_ids[start : start + BATCH_FILES]).order_by("path")
        batch = [
            FileWork(
                path=upload.path,
                language=language_of(upload.path),
                content_hash=upload.content_hash,
                size=upload.size,
                text=None if upload.skipped else upload.content,
                skipped=upload.skipped,
            )
            for upload in uploads
            if upload.path in needed
        ]
        sent.update(work.path for work in batch)
        _write(run, batch, ids, progress)
    # Asked for and never sent (the agent said it was done): the old version is out of date.
    not_sent = needed - sent
    run.skipped_files += len(not_sent)
    run.indexed_files += len(not_sent)
    run.removed = remove_files(index, [path for path in ids if path not in manifest or path in not_sent])


# --- both ---------------------------------------------------------------------------------------------------


def _write(run: CodeIndexRun, batch: list[FileWork], ids: dict[str, int], progress: Progress | None) -> None:
    if batch:
        if not CodeIndexRun.objects.filter(pk=run.pk, status=RunStatus.INDEXING).exists():
            raise _Closed
        written = write_files(run.index, batch, ids)
        run.added += written.added
        run.modified += written.modified
        run.skipped_files += written.skipped
        run.chunks_written += written.chunks
        run.embeddings_computed += written.computed
        run.embeddings_reused += written.reused
    run.indexed_files = run.unchanged + run.added + run.modified
    run.heartbeat_at = timezone.now()
    run.save(
        update_fields=[
            "indexed_files", "unchanged", "added", "modified", "skipped_files", "chunks_written",
            "embeddings_computed", "embeddings_reused", "heartbeat_at",
        ]
    )  # fmt: skip
    if progress is not None:
        progress(run)


def _finish(run: CodeIndexRun, status: str, error: str = "") -> None:
    now = timezone.now()
    with transaction.atomic():
        index = CodeIndex.objects.select_for_update().get(pk=run.index_id)
        refresh_totals(index)
        if status == RunStatus.COMPLETED:
            index.last_completed_at = now
            index.save(update_fields=["last_completed_at"])
            run.indexed_files = run.total_files
        run.status, run.phase, run.completed_at, run.error = status, RunPhase.FINISHED, now, error
        run.heartbeat_at = now
        run.save()
        CodeUpload.objects.filter(run=run).delete()
    merge_pending_keywords()  # what the run wrote, before the searches that follow read it


# --- recovery and watching --------------------------------------------------------------------------------


def _changed(root: Path, index: CodeIndex) -> bool:
    """Whether the directory differs from the index, by names, sizes and modification times."""
    known = {path: (size, mtime) for path, size, mtime in index.files.values_list("path", "size", "mtime_ns")}
    seen = 0
    for file in walk(root):
        if is_binary_name(file.path):
            continue
        seen += 1
        if known.get(file.path) != (file.size, file.mtime_ns):
            return True
    return seen != len(known)


def rescan(index_id: int) -> CodeIndexRun | None:
    """A watched index's re-scan: a run only when the directory changed (or can no longer be read)."""
    index = CodeIndex.objects.select_related("organization", "repository").filter(pk=index_id).first()
    if index is None or not index.watch or index.source != Source.PATH:
        return None
    close_stale_runs(index=index)
    if index.runs.filter(status=RunStatus.INDEXING).exists():
        return None  # that run will see the changes
    with repository_lock(index.pk) as acquired:
        return _rescan(index) if acquired else None


def _rescan(index: CodeIndex) -> CodeIndexRun | None:
    problem = ""
    try:
        root = checked_root(index.root_path, index.organization.slug)
    except DomainError as error:
        problem = f"watching stopped: {error.message}"
    if not problem and not _changed(root, index):
        CodeIndex.objects.filter(pk=index.pk).update(checked_at=timezone.now())
        return None
    try:
        with transaction.atomic():
            run = CodeIndexRun.objects.create(
                organization=index.organization,
                index=index,
                trigger=Trigger.WATCH,
                phase=RunPhase.RUNNING,
                root_path=index.root_path,
                requested_by="watch",
            )
            CodeIndex.objects.filter(pk=index.pk).update(checked_at=run.started_at, watch=not problem)
    except IntegrityError:
        return None  # a run was requested meanwhile
    run.index = index
    if not problem:
        return _execute(run, None)
    _finish(run, RunStatus.FAILED, problem)
    return run
