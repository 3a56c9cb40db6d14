"""Reads of code indexes, scoped to the principal's organization: an index, its status, its runs,
and every index of the organization. Every member may read (readers included)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, QuerySet

from code_index.models import CodeChunk, CodeIndex, CodeIndexRun, RunPhase, RunStatus
from memory_platform.exceptions import NotFound, ValidationError
from organizations.models import Repository
from organizations.principal import Principal
from organizations.selectors import repository_named


def code_repository(principal: Principal, repository: object) -> Repository:
    """The organization's repository an index request names. Another organization's is not
    found, exactly as one that does not exist; the message lists the known ones."""
    if not isinstance(repository, str) or not repository or "\x00" in repository:
        raise ValidationError(
            "repository must be the slug of one of your repositories", details={"field": "repository"}
        )
    try:
        return repository_named(principal, repository)
    except ValidationError as error:
        raise NotFound(error.message, details=error.details) from None


def code_index_get(principal: Principal, repository: str) -> CodeIndex:
    """The index of the organization's repository with this slug (NotFound as code_repository)."""
    target = code_repository(principal, repository)
    index = CodeIndex.objects.select_related("repository").filter(repository=target).first()
    if index is None:
        raise NotFound(
            f"repository '{target.slug}' has no code index yet: index it with code-index (a directory on the "
            "server with `path`, or your own files with `manifest`)",
            details={"field": "repository"},
        )
    return index


@dataclass(frozen=True)
class IndexStatus:
    index: CodeIndex
    run: CodeIndexRun | None  # the latest run, whatever its status
    total_chunks: int

    @property
    def status(self) -> str:
        return self.run.status if self.run is not None else RunStatus.COMPLETED

    @property
    def indexing(self) -> bool:
        return self.run is not None and self.run.status == RunStatus.INDEXING

    @property
    def total_files(self) -> int:
        """While a run is under way, the files it looks at; otherwise the files in the index (a
        failed run's own counts are in its record)."""
        if self.indexing and self.run is not None:
            return self.run.total_files
        return self.index.file_count

    @property
    def indexed_files(self) -> int:
        if self.indexing and self.run is not None:
            return self.run.indexed_files
        return self.index.file_count

    @property
    def still_needed(self) -> int:
        """Files a manifest sync still waits for."""
        if self.run is None or self.run.phase != RunPhase.RECEIVING:
            return 0
        return len(self.run.needed) - self.run.uploads.count()


def _latest_runs(indexes: list[CodeIndex]) -> dict[int, CodeIndexRun]:
    runs = (
        CodeIndexRun.objects.filter(index__in=indexes)
        .order_by("index_id", "-started_at", "-id")
        .distinct("index_id")
        .defer("manifest")
    )
    return {run.index_id: run for run in runs}


def _statuses(principal: Principal, indexes: list[CodeIndex]) -> list[IndexStatus]:
    runs = _latest_runs(indexes)
    live = {index.pk for index in indexes if index.pk in runs and runs[index.pk].status == RunStatus.INDEXING}
    counts: dict[int, int] = {}
    if live:
        # While a run writes, the chunks are counted; otherwise the index's total is exact.
        counts = dict(
            CodeChunk.objects.filter(
                organization=principal.organization,
                repository_id__in=[index.repository_id for index in indexes if index.pk in live],
            )
            .values_list("repository_id")
            .annotate(n=Count("pk"))
            .order_by()
        )
    return [
        IndexStatus(
            index=index,
            run=runs.get(index.pk),
            total_chunks=counts.get(index.repository_id, 0) if index.pk in live else index.chunk_count,
        )
        for index in indexes
    ]


def code_index_status(principal: Principal, repository: str) -> IndexStatus:
    return _statuses(principal, [code_index_get(principal, repository)])[0]


def code_index_list(principal: Principal) -> list[IndexStatus]:
    """Every code index of the organization, by repository slug."""
    indexes = list(
        CodeIndex.objects.filter(organization=principal.organization)
        .select_related("repository")
        .order_by("repository__slug")
    )
    return _statuses(principal, indexes)


def code_index_runs(principal: Principal, repository: str) -> QuerySet[CodeIndexRun]:
    """The index's runs, newest first."""
    index = code_index_get(principal, repository)
    return CodeIndexRun.objects.filter(index=index).defer("manifest").order_by("-started_at", "-id")


def organization_has_code(principal: Principal) -> bool:
    return CodeIndex.objects.filter(organization=principal.organization).exists()
