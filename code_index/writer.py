"""Writing a batch of changed files into an index: chunk them, find each chunk's embedding (reused
from an equal chunk of the organization's indexes, else computed), and replace the files' chunks in
one transaction, so a file is always either wholly old or wholly new.

The model runs before the transaction opens: a batch holds no row locks while it embeds.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import DatabaseError, connection, transaction
from django.db.models import Count, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from code_index.chunking import chunk_file
from code_index.keywords import chunk_keywords, embedding_text, text_hash
from code_index.models import CodeChunk, CodeFile, CodeIndex
from memories.embeddings import get_provider
from memories.fields import vector_text
from memories.models import FULL_TEXT_CONFIG
from memory_platform.db import replicas
from memory_platform.db.transactions import savepoint_if_in_transaction
from screening import find_secrets, redact_secrets

logger = logging.getLogger(__name__)

NAME_MAX = 500
DELETE_BATCH = 1000
KEYWORD_INDEX = "code_chunk_search_gin"


@dataclass
class FileWork:
    """A file to (re)index, read and hashed; ``text`` None when it is skipped (``skipped`` says why)."""

    path: str
    language: str
    content_hash: str
    size: int
    mtime_ns: int | None = None
    text: str | None = None
    skipped: str = ""


@dataclass
class Written:
    added: int = 0
    modified: int = 0
    skipped: int = 0
    chunks: int = 0
    computed: int = 0
    reused: int = 0
    files: int = 0


@dataclass
class _Row:
    file_path: str
    language: str
    chunk_type: str
    name: str
    container: str
    start_line: int
    end_line: int
    content: str
    embedded: str  # the text embedded
    content_hash: str
    keywords: str
    vector: str | None = field(default=None)


def _rows(work: FileWork) -> list[_Row]:
    if work.text is None:
        return []
    rows = []
    for chunk in chunk_file(work.path, _without_credentials(work), work.language):
        embedded = embedding_text(
            path=work.path, chunk_type=chunk.chunk_type, name=chunk.name, container=chunk.container,
            content=chunk.content,
        )  # fmt: skip
        rows.append(
            _Row(
                file_path=work.path,
                language=work.language,
                chunk_type=chunk.chunk_type,
                name=chunk.name[:NAME_MAX],
                container=chunk.container[:NAME_MAX],
                start_line=chunk.start_line,
                end_line=chunk.end_line,
                content=chunk.content,
                embedded=embedded,
                content_hash=text_hash(embedded),
                keywords=chunk_keywords(
                    path=work.path, name=chunk.name, container=chunk.container, content=chunk.content
                ),
            )
        )
    return rows


def _without_credentials(work: FileWork) -> str:
    """The file's text as it is indexed: every credential replaced by ``[REDACTED: kind]`` (lines keep
    their numbers), so no key or token is stored, embedded or served by code search."""
    text = work.text or ""
    findings = find_secrets(text, filename=work.path)
    if not findings:
        return text
    kinds = sorted({finding.kind for finding in findings})
    logger.info("%d credential(s) redacted from %s before indexing: %s", len(findings), work.path, ", ".join(kinds))
    return redact_secrets(text, findings)


def _vectors(organization_id: int, rows: list[_Row], written: Written) -> str:
    """Fill in every row's vector; returns the model's name. Raises EmbeddingError."""
    provider = get_provider()
    wanted = {row.content_hash for row in rows}
    known: dict[str, str] = {}
    if wanted:
        known = dict(
            CodeChunk.objects.filter(
                organization_id=organization_id,
                content_hash__in=wanted,
                embedding_model=provider.name,
                embedding__isnull=False,
            )
            .annotate(text=Cast("embedding", TextField()))
            .order_by("content_hash")
            .distinct("content_hash")
            .values_list("content_hash", "text")
        )
    missing: dict[str, str] = {}
    for row in rows:
        if row.content_hash not in known:
            missing.setdefault(row.content_hash, row.embedded)
    if missing:
        vectors = provider.embed(list(missing.values()))
        known.update(zip(missing, (vector_text(vector) for vector in vectors), strict=True))
    written.computed += len(missing)
    written.reused += len(rows) - len(missing)
    for row in rows:
        row.vector = known[row.content_hash]
    return provider.name


_INSERT = f"""
INSERT INTO code_index_codechunk (organization_id, repository_id, file_id, path, language, chunk_type, name,
    container, start_line, end_line, content, content_hash, embedding, embedding_model, search_vector, created_at)
SELECT %s, %s, u.file_id, u.path, u.language, u.chunk_type, u.name, u.container, u.start_line, u.end_line,
    u.content, u.content_hash, u.vector::vector, %s, to_tsvector('{FULL_TEXT_CONFIG}', u.keywords), %s
FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::int[], %s::int[],
    %s::text[], %s::text[], %s::text[], %s::text[])
    AS u(file_id, path, language, chunk_type, name, container, start_line, end_line, content, content_hash,
         vector, keywords)
"""  # noqa: S608 - constants only


def write_files(index: CodeIndex, works: list[FileWork], existing: dict[str, int]) -> Written:
    """Index these files (``existing``: path → CodeFile id of the files already in the index)."""
    written = Written(files=len(works))
    by_file = {work.path: _rows(work) for work in works}
    rows = [row for file_rows in by_file.values() for row in file_rows]
    model = _vectors(index.organization_id, rows, written)
    now = timezone.now()
    with transaction.atomic():
        old_ids = [existing[work.path] for work in works if work.path in existing]
        if old_ids:
            CodeChunk.objects.filter(file_id__in=old_ids).delete()
        files = []
        for work in works:
            file = CodeFile(
                pk=existing.get(work.path), index=index, organization_id=index.organization_id, path=work.path,
                language=work.language, size=work.size,
                content_hash=work.content_hash, mtime_ns=work.mtime_ns, skipped=work.skipped,
                chunk_count=len(by_file[work.path]), indexed_at=now,
            )  # fmt: skip
            files.append(file)
            written.skipped += bool(work.skipped)
            if work.path in existing:
                written.modified += 1
            else:
                written.added += 1
        kept = [file for file in files if file.pk is not None]
        CodeFile.objects.bulk_update(
            kept, ["language", "size", "content_hash", "mtime_ns", "skipped", "chunk_count", "indexed_at"]
        )
        created = CodeFile.objects.bulk_create([file for file in files if file.pk is None])
        ids = {file.path: file.pk for file in [*kept, *created]}
        for work in works:
            existing[work.path] = ids[work.path]
        if rows:
            columns = [
                [ids[row.file_path] for row in rows],
                *(
                    [getattr(row, name) for row in rows]
                    for name in ("file_path", "language", "chunk_type", "name", "container", "start_line",
                                 "end_line", "content", "content_hash", "vector", "keywords")
                ),
            ]  # fmt: skip
            with connection.cursor() as cursor:
                cursor.execute(_INSERT, [index.organization_id, index.repository_id, model, now, *columns])
        replicas.written(index.organization_id)
    written.chunks = len(rows)
    return written


def touch_files(updates: dict[int, int]) -> None:
    """Record new modification times of files whose content did not change (file id → mtime_ns)."""
    files = [CodeFile(pk=pk, mtime_ns=mtime) for pk, mtime in updates.items()]
    CodeFile.objects.bulk_update(files, ["mtime_ns"], batch_size=DELETE_BATCH)


def remove_files(index: CodeIndex, paths: Iterable[str]) -> int:
    """Take these files, and their chunks, out of the index."""
    removed = 0
    paths = list(paths)
    for start in range(0, len(paths), DELETE_BATCH):
        with transaction.atomic():
            ids = list(
                CodeFile.objects.filter(index=index, path__in=paths[start : start + DELETE_BATCH]).values_list(
                    "pk", flat=True
                )
            )
            CodeChunk.objects.filter(file_id__in=ids).delete()
            removed += CodeFile.objects.filter(pk__in=ids).delete()[0]
            replicas.written(index.organization_id)
    return removed


def refresh_totals(index: CodeIndex) -> None:
    """The index's file, chunk and lexeme totals and languages, as they stand now."""
    indexed = CodeFile.objects.filter(index=index, skipped="")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), coalesce(sum(length(search_vector)), 0) FROM code_index_codechunk "
            "WHERE organization_id = %s AND repository_id = %s",
            [index.organization_id, index.repository_id],
        )
        chunks, lexemes = cursor.fetchone()
    index.file_count = indexed.count()
    index.chunk_count = int(chunks)
    index.lexeme_total = int(lexemes)
    index.languages = dict(indexed.values_list("language").annotate(n=Count("pk")).order_by("language"))
    index.updated_at = timezone.now()
    index.save(update_fields=["file_count", "chunk_count", "lexeme_total", "languages", "updated_at"])


def merge_pending_keywords() -> int:
    """Merge the words of the chunks written since the last merge into the keyword index proper;
    the pages merged (0 when there were none, or when the database refused: logged).

    The chunks' GIN index keeps its pending list (fastupdate): a run writes thousands of chunks,
    and appending their words to an unsorted list is much cheaper than adding each to the index.
    But every keyword search reads that list in full until a vacuum merges it: 1,500 chunks
    pending made a keyword search over 8,000 chunks 25-40% slower. So a run merges it when it ends.
    """
    try:
        # In a caller's transaction, a savepoint: a refused merge must not abort the caller's work.
        with savepoint_if_in_transaction(), connection.cursor() as cursor:
            cursor.execute("SELECT gin_clean_pending_list(%s::regclass)", [KEYWORD_INDEX])
            return int(cursor.fetchone()[0])
    except DatabaseError as error:  # not the index's owner, say: a vacuum merges the list instead
        logger.warning("the code keyword index's pending list was left to vacuum: %s", error)
        return 0
