"""The base of the platform's management commands that do one job and exit."""

from __future__ import annotations

from django.core.management.base import BaseCommand


class PlatformCommand(BaseCommand):
    """A command an operator or a script runs (create a token, index a repository, back up, serve MCP
    over stdio for one agent). Django's system checks import every view to check the URLs (the MCP
    SDK among them): over a second of CPU each time, which such a command never needs. They run where
    a configuration is put to use: ``serve``, ``migrate`` and ``manage.py check [--deploy]``."""

    requires_system_checks: list[str] = []
