from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db import transaction

from memory_platform.commands import PlatformCommand
from memory_platform.exceptions import DomainError
from organizations.management.commands._output import check_role, domain_error, emit, role_argument
from organizations.models import Role
from organizations.principal import Principal
from organizations.services import organization_create
from organizations.tokens import token_create


class Command(PlatformCommand):
    help = "Create an organization and one API token for it. The token is printed once, never again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="Short unique name, e.g. acme (lowercase letters, digits, hyphens).")
        parser.add_argument("--name", default="", help="Display name (default: the slug).")
        role_argument(parser, Role.AGENT)
        parser.add_argument("--json", action="store_true", help="Print {organization, token, role} as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        role = check_role(options["role"])
        try:
            with transaction.atomic():
                organization = organization_create(slug=options["slug"], name=options["name"])
                issued = token_create(
                    principal=Principal.for_operator(organization),
                    role=role,
                    name=f"created with the organization ({role})",
                )
        except DomainError as error:
            raise domain_error(error) from None
        except ValueError as error:
            raise CommandError(str(error)) from None
        emit(
            self,
            {"organization": organization.slug, "token": issued.raw, "role": role},
            options["json"],
            [
                f"Created organization '{organization.slug}'.",
                f"{role.capitalize()} token (shown once, store it now): {issued.raw}",
            ],
        )
