from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from memory_platform.commands import PlatformCommand
from memory_platform.exceptions import Conflict, DomainError, NotFound
from organizations.management.commands._output import check_role, domain_error, emit, organization_by_slug
from organizations.password_links import link_lifetime_days, set_password_path
from organizations.principal import Principal
from organizations.services import AddedMember, member_add

DEFAULT_BASE_URL = "http://127.0.0.1:8000"  # where `make run` serves


class Command(PlatformCommand):
    help = (
        "Give a person a role in an organization (or change it) and let them log into the admin. "
        "With --create, make the user too and print a one-time link where they set their password."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--organization", required=True, help="Slug of the organization.")
        parser.add_argument("--user", required=True, help="Username of the person.")
        parser.add_argument("--role", required=True, help="reader, agent, curator or admin.")
        parser.add_argument("--create", action="store_true", help="Create the user (it must not exist yet).")
        parser.add_argument("--email", default="", help="Email of the user created with --create.")
        parser.add_argument(
            "--base-url",
            default=DEFAULT_BASE_URL,
            help=f"Address the person opens the platform at, for the set-password link (default: {DEFAULT_BASE_URL}).",
        )
        parser.add_argument("--json", action="store_true", help="Print {organization, user, role, ...} as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        role = check_role(options["role"])
        organization = organization_by_slug(options["organization"])
        if options["email"] and not options["create"]:
            raise CommandError("--email is set only with --create (a user may belong to other organizations)")
        try:
            added = member_add(
                principal=Principal.for_operator(organization),
                username=options["user"],
                role=role,
                create=options["create"],
                email=options["email"],
            )
        except NotFound as error:
            raise CommandError(f"{error.message}; add --create to create the user") from None
        except Conflict as error:
            raise CommandError(f"{error.message}; leave out --create to add them") from None
        except DomainError as error:
            raise domain_error(error) from None
        self._report(added, options["base_url"].rstrip("/"), options["json"])

    def _report(self, added: AddedMember, base_url: str, as_json: bool) -> None:
        membership = added.membership
        user = membership.user
        link = f"{base_url}{set_password_path(user)}" if added.needs_password else None
        lines = [self._summary(added)]
        if link is not None:
            lines.append(
                f"Set-password link for {user.get_username()} (works once, for {link_lifetime_days()} days; "
                f"hand it over privately): {link}"
            )
        lines.append(f"They log in at {base_url}/admin/ as {user.get_username()}.")
        payload = {
            "organization": membership.organization.slug,
            "user": user.get_username(),
            "role": membership.role,
            "previous_role": added.previous_role,
            "created_user": added.created_user,
            "set_password_link": link,
            "login_url": f"{base_url}/admin/",
        }
        emit(self, payload, as_json, lines)

    @staticmethod
    def _summary(added: AddedMember) -> str:
        membership = added.membership
        who, org, role = membership.user.get_username(), membership.organization.slug, membership.role
        if added.created_user:
            return f"Created user '{who}' and made them {role} of '{org}'."
        if added.previous_role is None:
            return f"Made '{who}' {role} of '{org}'."
        if added.previous_role == role:
            return f"'{who}' is already {role} of '{org}'."
        return f"Changed '{who}' in '{org}' from {added.previous_role} to {role}."
