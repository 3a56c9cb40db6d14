"""`manage.py reembed`: embed memories again after a model change, or catch up on pending ones."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from memories.embedding_pipeline import (
    BACKFILL_BATCH,
    embed_pending_batches,
    mark_for_reembedding,
    pending_memories,
)
from memories.embeddings import EmbeddingError, EmbeddingProvider, get_provider
from memory_platform.commands import PlatformCommand
from memory_platform.progress import ProgressStream
from organizations.management.commands._output import organization_by_slug


class Command(PlatformCommand):
    help = (
        "Embed memories with the configured embedding provider: every memory after a model change (--all), "
        "or only those whose embedding is pending (--pending, the default)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group()
        which.add_argument(
            "--all", action="store_true", help="Mark every memory pending, then embed them all (after a model change)."
        )
        which.add_argument(
            "--pending", action="store_true", help="Embed only memories whose embedding is pending (the default)."
        )
        parser.add_argument("--organization", metavar="SLUG", help="Only this organization's memories.")
        parser.add_argument(
            "--batch-size", type=int, default=BACKFILL_BATCH, help=f"Texts per model call (default {BACKFILL_BATCH})."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        batch_size: int = options["batch_size"]
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        organization = organization_by_slug(options["organization"]) if options["organization"] else None
        provider = _working_provider()

        if options["all"]:
            mark_for_reembedding(organization=organization)
        total = pending_memories(organization=organization).count()
        embedded = 0
        started = time.perf_counter()
        with tqdm(total=total, desc="Embedding", unit=" memories", file=ProgressStream(self.stderr)) as progress:
            try:
                for count in embed_pending_batches(organization=organization, batch_size=batch_size):
                    embedded += count
                    progress.update(count)
            except EmbeddingError as error:
                raise CommandError(
                    f"the embedding provider failed after {embedded} of {total} memories: {error}\n"
                    "The rest stay pending: the worker's sweep embeds them once the provider answers, "
                    "or run `manage.py reembed --pending` again."
                ) from error
        elapsed = time.perf_counter() - started

        rate = embedded / elapsed if elapsed > 0 else 0.0
        scope = f" of organization '{organization.slug}'" if organization else ""
        self.stdout.write(
            f"Embedded {embedded} memories{scope} with {provider.name} in {elapsed:.1f} s ({rate:.1f} memories/s)."
        )
        if embedded < total:
            self.stdout.write(
                f"{total - embedded} were edited or embedded elsewhere while this ran; those writes embed them."
            )


def _working_provider() -> EmbeddingProvider:
    """The configured provider, after one real call: a provider that is down must not leave
    every memory marked pending with its old vector gone."""
    try:
        provider = get_provider()
        provider.embed(["Is the embedding provider reachable?"])
    except EmbeddingError as error:
        raise CommandError(f"the embedding provider is unavailable, nothing was changed: {error}") from error
    return provider
