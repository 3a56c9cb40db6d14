"""`manage.py mentions`: find again the names every memory mentions (the memory-entity graph)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser
from django.db import transaction

from knowledge.mentions import rebuild
from memory_platform.commands import PlatformCommand
from organizations.management.commands._output import organization_by_slug
from organizations.models import Organization


class Command(PlatformCommand):
    help = (
        "Find the names every memory mentions and link the memories to the entities known by them: once after "
        "upgrading to a version that keeps them, or to apply a better finder. Each organization in one transaction."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--organization", metavar="SLUG", help="Only this organization's memories.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["organization"]:
            organizations = [organization_by_slug(options["organization"])]
        else:
            organizations = list(Organization.objects.order_by("slug"))
        for organization in organizations:
            with transaction.atomic():
                found = rebuild(organization.pk)
            self.stdout.write(f"{organization.slug}: {found} mentions")
