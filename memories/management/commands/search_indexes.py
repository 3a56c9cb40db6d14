"""`manage.py search_indexes`: each large organization's own search indexes, listed or built now."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import CommandParser

from memories.search import tenant_indexes
from memory_platform.commands import PlatformCommand
from organizations.models import Organization


class Command(PlatformCommand):
    help = (
        "List the organizations with their own search indexes (HNSW and full text) and those due one "
        "(more than SEARCH_EXACT_SCAN_LIMIT memories); --build builds the due ones now, and builds again the "
        "graphs built with other settings than SEARCH_HNSW_M and SEARCH_HNSW_EF_CONSTRUCTION, concurrently, "
        "as the worker's sweep does every TENANT_INDEX_INTERVAL_SECONDS."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--build", action="store_true", help="Build the due organizations' indexes now.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["build"]:
            started = time.perf_counter()
            built = tenant_indexes.sweep()
            for organization_id, names in built.items():
                self.stdout.write(f"built {', '.join(names)} (organization {organization_id})")
            self.stdout.write(f"{len(built)} organizations indexed in {time.perf_counter() - started:.1f} s")
        slugs = dict(Organization.objects.values_list("pk", "slug"))
        indexes = tenant_indexes.existing()
        due = tenant_indexes.organizations_due()
        self.stdout.write(
            f"{len({i.organization_id for i in indexes})} organizations have their own indexes; "
            f"{len(due)} more are due (over {settings.SEARCH_EXACT_SCAN_LIMIT} memories)"
        )
        for index in indexes:
            state = "valid" if index.valid else "INVALID (a failed build: the next sweep replaces it)"
            if index.graph:
                graph = ", ".join(f"{name} {value}" for name, value in index.options) or "pgvector's defaults"
                state += f", built with {graph}" + ("" if index.current else " (the next sweep builds it again)")
            slug = slugs.get(index.organization_id, f"#{index.organization_id}")
            self.stdout.write(f"  {slug:<30} {index.name:<28} {index.size_bytes / 2**20:9.1f} MB  {state}")
        for organization_id, memories in due:
            slug = slugs.get(organization_id, f"#{organization_id}")
            self.stdout.write(f"  {slug:<30} due: {memories} memories")
