from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from memory_platform.commands import PlatformCommand
from memory_platform.exceptions import DomainError
from organizations.management.commands._output import domain_error
from organizations.models import ApiToken
from organizations.principal import Principal
from organizations.tokens import token_revoke


class Command(PlatformCommand):
    help = "Revoke an API token by its prefix (the 8 characters after 'mp_'; a whole token works too)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("prefix", help="Token prefix, e.g. 3fa85f64, or the whole token.")

    def handle(self, *args: Any, **options: Any) -> None:
        prefix = options["prefix"].removeprefix("mp_").split("_", 1)[0]
        token = ApiToken.objects.select_related("organization").filter(prefix=prefix).first()
        if token is None:
            raise CommandError(f"no token with prefix '{prefix}'")
        try:
            token = token_revoke(principal=Principal.for_operator(token.organization), prefix=prefix)
        except DomainError as error:
            raise domain_error(error) from None
        self.stdout.write(f"Revoked token {token.display} of '{token.organization.slug}' ({token.role}).")
