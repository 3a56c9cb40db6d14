"""`manage.py lifecycle_run`: run the lifecycle workers now, in this process, and print what they did."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandError, CommandParser

from lifecycle.consolidation import consolidation_run
from lifecycle.decay import decay_run
from lifecycle.expiry import expiry_run
from memory_platform.commands import PlatformCommand
from organizations.management.commands._output import organization_by_slug
from organizations.models import Organization

JOBS = ("consolidate", "decay", "expire")


class Command(PlatformCommand):
    help = (
        "Run consolidation (duplicate detection and merges), decay (freshness and stale proposals) and expiry "
        "records now, for one organization or all. Consolidation is incremental unless --full."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("jobs", nargs="*", metavar="JOB", help=f"Any of {', '.join(JOBS)}; default: all of them.")
        parser.add_argument("--organization", metavar="SLUG", help="Only this organization (default: every one).")
        parser.add_argument("--full", action="store_true", help="Consolidate every memory, not just what changed.")
        parser.add_argument("--time-budget", type=float, default=None, help="Seconds a consolidation run may take.")

    def handle(self, *args: Any, **options: Any) -> None:
        jobs = options["jobs"] or list(JOBS)
        unknown = sorted(set(jobs) - set(JOBS))
        if unknown:
            raise CommandError(f"unknown job(s) {', '.join(unknown)}; use any of {', '.join(JOBS)}")
        if options["time_budget"] is not None and options["time_budget"] <= 0:
            raise CommandError("--time-budget must be a positive number of seconds")
        organizations = (
            [organization_by_slug(options["organization"])]
            if options["organization"]
            else list(Organization.objects.order_by("slug"))
        )
        for organization in organizations:
            for job in jobs:
                if job == "consolidate":
                    run = consolidation_run(
                        organization=organization, full=options["full"], time_budget=options["time_budget"]
                    )
                elif job == "decay":
                    run = decay_run(organization=organization)
                else:
                    run = expiry_run(organization=organization)
                if run is None:
                    self.stdout.write(f"{organization.slug}: {job} skipped, another worker is running it")
                    continue
                counts = json.dumps(run.counts, default=str)
                self.stdout.write(f"{organization.slug}: {job} {run.status} in {run.seconds_used:.1f} s {counts}")
                if run.errors:
                    self.stderr.write(f"  {run.errors}")
