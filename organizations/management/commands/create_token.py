from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils import timezone

from memory_platform.commands import PlatformCommand
from memory_platform.exceptions import DomainError
from organizations.management.commands._output import (
    check_role,
    domain_error,
    emit,
    organization_by_slug,
    role_argument,
)
from organizations.models import Role, User
from organizations.principal import Principal
from organizations.tokens import token_create


class Command(PlatformCommand):
    help = "Create an API token for an organization. The token is printed once, never again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--organization", required=True, help="Slug of the organization.")
        role_argument(parser, Role.AGENT)
        parser.add_argument("--name", default="", help="What the token is for, e.g. 'ci-bot'.")
        parser.add_argument(
            "--user", default=None, help="Username the token acts for (needed for user-scope memories)."
        )
        parser.add_argument("--expires-in-days", type=int, default=None, help="Expire the token after N days.")
        parser.add_argument("--json", action="store_true", help="Print {organization, token, role} as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        role = check_role(options["role"])
        organization = organization_by_slug(options["organization"])
        user = None
        if options["user"]:
            user = User.objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"no user '{options['user']}'")
        expires_at = None
        if options["expires_in_days"] is not None:
            if options["expires_in_days"] <= 0:
                raise CommandError("--expires-in-days must be a positive number of days")
            expires_at = timezone.now() + timedelta(days=options["expires_in_days"])
        try:
            issued = token_create(
                principal=Principal.for_operator(organization),
                role=role,
                name=options["name"],
                user=user,
                expires_at=expires_at,
            )
        except DomainError as error:
            raise domain_error(error) from None
        emit(
            self,
            {"organization": organization.slug, "token": issued.raw, "role": role},
            options["json"],
            [f"{role.capitalize()} token for '{organization.slug}' (shown once, store it now): {issued.raw}"],
        )
