"""Shared helpers for the tenancy commands."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memory_platform.exceptions import DomainError
from organizations import selectors
from organizations.models import Organization, Role


def role_argument(parser: Any, default: str) -> None:
    parser.add_argument(
        "--role",
        "--token-role",
        dest="role",
        default=default,
        help=f"Role of the token: {', '.join(Role.values)} (default: {default}).",
    )


def check_role(role: str) -> str:
    if role not in Role.values:
        raise CommandError(f"unknown role '{role}'; use one of: {', '.join(Role.values)}")
    return role


def organization_by_slug(slug: str) -> Organization:
    organization = selectors.organization_by_slug(slug)
    if organization is None:
        known = ", ".join(selectors.organization_slugs(limit=20)) or "none yet"
        raise CommandError(f"no organization '{slug}' (known: {known}); create it with create_organization")
    return organization


def emit(command: BaseCommand, payload: dict[str, Any], as_json: bool, lines: list[str]) -> None:
    if as_json:
        command.stdout.write(json.dumps(payload))
    else:
        for line in lines:
            command.stdout.write(line)


def domain_error(error: DomainError) -> CommandError:
    return CommandError(error.message)
