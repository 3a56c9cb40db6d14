"""The one JSON shape of an index's status, a run and a search hit, for every interface.

Field names follow seed 004's code index: a hit's ``file_path``, ``start_line``, ``end_line``,
``language``, ``chunk_type``, ``name``, ``score`` and ``content``; a status's ``status``,
``total_files``, ``indexed_files``, ``total_chunks``, ``started_at`` and ``completed_at``. Ours
follow them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings

from code_index.models import CodeIndexRun, RunPhase, Source
from code_index.search import CodeHit
from code_index.selectors import IndexStatus
from code_index.services import DeletedIndex, ManifestAnswer, UploadAnswer
from memory_platform.timefmt import iso


def _iso(moment: datetime | None) -> str | None:
    return iso(moment)


def run_values(run: CodeIndexRun) -> dict[str, Any]:
    return {
        "id": run.pk,
        "trigger": str(run.trigger),
        "status": str(run.status),
        "phase": str(run.phase),
        "requested_by": run.requested_by,
        "total_files": run.total_files,
        "indexed_files": run.indexed_files,
        "skipped_files": run.skipped_files,
        "added": run.added,
        "modified": run.modified,
        "removed": run.removed,
        "unchanged": run.unchanged,
        "chunks_written": run.chunks_written,
        "embeddings_computed": run.embeddings_computed,
        "embeddings_reused": run.embeddings_reused,
        "resumed": run.resumed,
        "error": run.error or None,
        "started_at": _iso(run.started_at),
        "completed_at": _iso(run.completed_at),
    }


def status_values(status: IndexStatus) -> dict[str, Any]:
    index, run = status.index, status.run
    return {
        "repository": index.repository.slug,
        "status": str(status.status),
        "phase": str(run.phase) if run is not None else None,
        "total_files": status.total_files,
        "indexed_files": status.indexed_files,
        "total_chunks": status.total_chunks,
        "started_at": _iso(run.started_at if run is not None else None),
        "completed_at": _iso(run.completed_at if run is not None else None),
        "error": (run.error or None) if run is not None else None,
        "files_to_send": status.still_needed,
        "source": str(index.source),
        "path": index.root_path if index.source == Source.PATH else None,
        "watch": index.watch,
        "languages": index.languages,
        "last_completed_at": _iso(index.last_completed_at),
        "last_run": run_values(run) if run is not None else None,
    }


def hit_values(hit: CodeHit) -> dict[str, Any]:
    chunk = hit.chunk
    return {
        "file_path": chunk.path,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "language": chunk.language,
        "chunk_type": chunk.chunk_type,
        "name": chunk.name,
        "score": hit.score,
        "content": hit.content,
        "repository": chunk.repository.slug,
        "container": chunk.container,
        "truncated": hit.truncated,
    }


# Paths listed in one answer of a manifest sync (every answer says how many there are in all).
LISTED_PATHS = 1000


def _limits() -> dict[str, int]:
    return {"files": settings.CODE_INDEX_UPLOAD_MAX_FILES, "bytes": settings.CODE_INDEX_UPLOAD_MAX_BYTES}


def started_values(run: CodeIndexRun) -> dict[str, Any]:
    """The answer to a directory run just queued."""
    return {
        "repository": run.index.repository.slug,
        "run_id": run.pk,
        "status": str(run.status),
        "phase": str(run.phase),
        "path": run.root_path,
        "watch": run.index.watch,
        "message": "indexing in the background; follow it with code-index-status (only changed files are re-read)",
    }


def manifest_values(answer: ManifestAnswer) -> dict[str, Any]:
    run = answer.run
    limits = _limits()
    if answer.needed:
        message = (
            f"send the {len(answer.needed)} needed files with code-index(repository, files=[{{path, content}}]) in "
            f"batches of at most {limits['files']} files and {limits['bytes']} bytes; each answer lists what is "
            "still needed, and the index is updated once the last one arrives"
        )
    else:
        message = "nothing to send: the index is brought in line with the manifest in the background"
    return {
        "repository": run.index.repository.slug,
        "run_id": run.pk,
        "status": str(run.status),
        "phase": str(run.phase),
        "needed": answer.needed[:LISTED_PATHS],
        "needed_count": len(answer.needed),
        "unchanged": answer.unchanged,
        "to_remove": answer.to_remove,
        "ignored": answer.ignored[:LISTED_PATHS],
        "ignored_count": len(answer.ignored),
        "batch_limits": limits,
        "message": message,
    }


def upload_values(answer: UploadAnswer) -> dict[str, Any]:
    run = answer.run
    if run.phase == RunPhase.RECEIVING:
        message = f"{len(answer.remaining)} files still to send"
    else:
        message = "all files received: the index is updated in the background (code-index-status)"
    return {
        "repository": run.index.repository.slug,
        "run_id": run.pk,
        "status": str(run.status),
        "phase": str(run.phase),
        "received": answer.received,
        "remaining": answer.remaining[:LISTED_PATHS],
        "remaining_count": len(answer.remaining),
        "batch_limits": _limits(),
        "message": message,
    }


def deleted_values(deleted: DeletedIndex) -> dict[str, Any]:
    return {
        "repository": deleted.repository,
        "deleted": True,
        "files": deleted.files,
        "chunks": deleted.chunks,
        "message": "the code index is gone; the repository and its memories are untouched",
    }
