"""The code index of a repository: its files, their chunks (with an embedding and a keyword
vector each), the runs that built it, and the file contents an agent uploads for a run."""

from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q
from django.utils import timezone
from pgvector.django import HnswIndex

from code_index.chunking import ChunkType
from memories.fields import EmbeddingField
from memories.models import EMBEDDING_DIMENSIONS
from organizations.models import Organization, Repository


class Source(models.TextChoices):
    PATH = "path", "A directory on the server"
    FILES = "files", "Files sent by the agent"


class RunStatus(models.TextChoices):
    INDEXING = "indexing", "Indexing"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"


class RunPhase(models.TextChoices):
    """Where an ``indexing`` run is: the status alone cannot say what it waits for."""

    RECEIVING = "receiving", "Waiting for the agent's files"
    QUEUED = "queued", "Waiting for a worker"
    RUNNING = "running", "Chunking and embedding"
    FINISHED = "finished", "Finished"


class Trigger(models.TextChoices):
    PATH = "path", "Path"
    MANIFEST = "manifest", "Manifest sync"
    WATCH = "watch", "Watch re-scan"
    COMMAND = "command", "manage.py code_index"


CHUNK_TYPES = [(value, value.title()) for value in ChunkType.values]


class CodeIndex(models.Model):
    """One repository's index. What it holds is in its files and chunks; how it got there, in its runs."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="code_indexes")
    repository = models.OneToOneField(Repository, on_delete=models.CASCADE, related_name="code_index")
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.FILES)
    root_path = models.TextField(blank=True, help_text="The directory indexed, for a path index.")
    watch = models.BooleanField(default=False, help_text="Re-scanned by beat, for a path index.")
    # Totals as of the last finished run (search reads them for its BM25 statistics).
    file_count = models.PositiveIntegerField(default=0)
    chunk_count = models.PositiveIntegerField(default=0)
    lexeme_total = models.PositiveBigIntegerField(default=0)
    languages = models.JSONField(default=dict, blank=True, help_text="Indexed files per language.")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    last_completed_at = models.DateTimeField(null=True, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True, help_text="The last watch re-scan.")

    class Meta:
        verbose_name = "code index"
        verbose_name_plural = "code indexes"
        ordering = ["repository__slug"]

    def __str__(self) -> str:
        return f"code index of {self.repository}"


class CodeFile(models.Model):
    index = models.ForeignKey(CodeIndex, on_delete=models.CASCADE, related_name="files", db_index=False)
    # The index's (the database gives it to an insert that leaves it out: migration 0004).
    organization = models.ForeignKey(
        "organizations.Organization", on_delete=models.CASCADE, related_name="+", db_index=False, editable=False
    )
    path = models.TextField(help_text="Relative to the indexed root, with forward slashes.")
    language = models.CharField(max_length=32)
    size = models.PositiveBigIntegerField(default=0)
    content_hash = models.CharField(max_length=64, help_text="sha256 of the file's bytes.")
    # A path index notices changes by size and modification time before hashing.
    mtime_ns = models.BigIntegerField(null=True, blank=True)
    skipped = models.CharField(max_length=64, blank=True, help_text="Why it has no chunks (binary, too large…).")
    chunk_count = models.PositiveIntegerField(default=0)
    indexed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["index", "path", "organization"], name="code_file_path_unique")]

    def __str__(self) -> str:
        return self.path


class CodeChunk(models.Model):
    """A function, class, section or window of a file, as search finds it.

    The organization, repository, path and language are copied from the file so that search
    filters them on this table itself: pgvector's iterative scan of the shared HNSW graph can then
    check them row by row.
    """

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+", db_index=False)
    repository = models.ForeignKey(Repository, on_delete=models.CASCADE, related_name="+", db_index=False)
    file = models.ForeignKey(CodeFile, on_delete=models.CASCADE, related_name="chunks", db_constraint=False)
    path = models.TextField()
    language = models.CharField(max_length=32)
    chunk_type = models.CharField(max_length=16, choices=CHUNK_TYPES)
    name = models.CharField(max_length=500, blank=True, help_text="The symbol or heading; several if merged.")
    container = models.CharField(max_length=500, blank=True, help_text="The class (or headings) it is in.")
    start_line = models.PositiveIntegerField()
    end_line = models.PositiveIntegerField()
    content = models.TextField()
    # sha256 of the text embedded (header and content): equal texts share one embedding.
    content_hash = models.CharField(max_length=64)
    embedding = EmbeddingField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)
    # Content, identifiers split on camelCase and snake_case, names and path (code_index/keywords.py).
    search_vector = SearchVectorField(null=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "repository"], name="code_chunk_org_repo_idx"),
            models.Index(fields=["organization", "content_hash"], name="code_chunk_org_hash_idx"),
            # With GIN's pending list (fastupdate), unlike the memories' indexes: chunks come in runs
            # of thousands, and each run merges the list when it ends (writer.merge_pending_keywords).
            GinIndex(fields=["search_vector"], name="code_chunk_search_gin"),
            HnswIndex(
                name="code_chunk_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(chunk_type__in=ChunkType.values), name="code_chunk_type_valid"),
            models.CheckConstraint(condition=Q(end_line__gte=models.F("start_line")), name="code_chunk_lines_ordered"),
        ]

    def __str__(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


class CodeIndexRun(models.Model):
    """One pass over a repository: a path scan, a manifest sync, or a watch re-scan that found changes."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    index = models.ForeignKey(CodeIndex, on_delete=models.CASCADE, related_name="runs", db_index=False)
    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.INDEXING)
    phase = models.CharField(max_length=16, choices=RunPhase.choices, default=RunPhase.QUEUED)
    requested_by = models.CharField(max_length=200, blank=True)
    root_path = models.TextField(blank=True)
    # A manifest sync: every path the agent has (path → sha256) and those the server asked for.
    manifest = models.JSONField(null=True, blank=True)
    needed = models.JSONField(default=list, blank=True)
    total_files = models.PositiveIntegerField(default=0)
    indexed_files = models.PositiveIntegerField(default=0)
    skipped_files = models.PositiveIntegerField(default=0)
    added = models.PositiveIntegerField(default=0)
    modified = models.PositiveIntegerField(default=0)
    removed = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    chunks_written = models.PositiveIntegerField(default=0)
    embeddings_computed = models.PositiveIntegerField(default=0)
    embeddings_reused = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)
    # The last sign of life: a file batch written, an upload received.
    heartbeat_at = models.DateTimeField(default=timezone.now)
    # Times beat's sweep handed the run to a worker again after the one running it died.
    resumed = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["index", "-started_at"], name="code_run_index_started_idx")]
        constraints = [
            # One run per repository at a time.
            models.UniqueConstraint(
                fields=["index", "organization"], condition=Q(status="indexing"), name="code_run_one_open"
            ),
            models.CheckConstraint(condition=Q(status__in=RunStatus.values), name="code_run_status_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.get_trigger_display()} run of {self.index_id} at {self.started_at:%Y-%m-%d %H:%M}"


class CodeUpload(models.Model):
    """A file's content an agent sent for a manifest sync, kept until its run has indexed it."""

    run = models.ForeignKey(
        CodeIndexRun, on_delete=models.CASCADE, related_name="uploads", db_index=False, db_constraint=False
    )
    # The run's (the database gives it to an insert that leaves it out: migration 0004).
    organization = models.ForeignKey(
        "organizations.Organization", on_delete=models.CASCADE, related_name="+", db_index=False, editable=False
    )
    path = models.TextField()
    content = models.TextField(blank=True)
    content_hash = models.CharField(max_length=64)
    size = models.PositiveBigIntegerField(default=0)
    skipped = models.CharField(max_length=64, blank=True)
    received_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "path", "organization"], name="code_upload_path_unique")]

    def __str__(self) -> str:
        return self.path
