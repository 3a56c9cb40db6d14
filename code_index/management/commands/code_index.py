"""`manage.py code_index REPOSITORY PATH`: index a directory of the host into a repository's code
index, in this process, with a progress bar."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from code_index import pipeline, services
from code_index.models import CodeIndexRun, RunStatus
from memory_platform.commands import PlatformCommand
from memory_platform.exceptions import DomainError
from memory_platform.progress import ProgressStream
from organizations.management.commands._output import organization_by_slug
from organizations.models import Organization
from organizations.principal import Principal


class Command(PlatformCommand):
    help = (
        "Index a directory of this host into the code index of an existing repository: files that changed since "
        "the last run are chunked and embedded, files gone are removed. Any directory may be named here (the "
        "host's operator is trusted); agents are held to CODE_INDEX_ROOTS."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("repository", help="The repository's slug (it must exist).")
        parser.add_argument("path", help="The directory to index.")
        parser.add_argument(
            "--organization", metavar="SLUG", help="The repository's organization (needed when there are several)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        organization = _organization(options["organization"])
        principal = Principal.for_operator(organization, "manage.py code_index")
        try:
            run = services.code_index_command(
                principal=principal, repository=options["repository"], path=Path(options["path"])
            )
        except DomainError as error:
            raise CommandError(error.message) from error
        started = time.perf_counter()
        with tqdm(desc="Indexing", unit=" files", file=ProgressStream(self.stderr)) as bar:

            def progress(current: CodeIndexRun) -> None:
                bar.total = current.total_files
                bar.n = current.indexed_files
                bar.set_postfix(chunks=current.chunks_written, refresh=False)
                bar.refresh()

            try:
                finished = pipeline.run_index(run.pk, progress=progress)
            except pipeline.Busy as busy:
                raise CommandError(f"{busy}; try again in a moment") from busy
            if finished is not None and finished.status == RunStatus.COMPLETED:
                progress(finished)
        if finished is None:
            raise CommandError("the run was replaced or closed by another request before it started")
        if finished.status != RunStatus.COMPLETED:
            raise CommandError(f"indexing failed: {finished.error}")
        elapsed = time.perf_counter() - started
        self.stdout.write(
            f"Indexed {options['repository']} from {finished.root_path} in {elapsed:.1f} s: {finished.total_files} "
            f"files ({finished.added} added, {finished.modified} changed, {finished.removed} removed, "
            f"{finished.unchanged} unchanged, {finished.skipped_files} skipped), {finished.chunks_written} chunks "
            f"written ({finished.embeddings_computed} embedded, {finished.embeddings_reused} reused)."
        )


def _organization(slug: str | None) -> Organization:
    if slug:
        return organization_by_slug(slug)
    organizations = list(Organization.objects.order_by("slug")[:2])
    if len(organizations) == 1:
        return organizations[0]
    known = ", ".join(Organization.objects.order_by("slug").values_list("slug", flat=True)[:20]) or "none yet"
    raise CommandError(f"name the repository's organization with --organization (known: {known})")
