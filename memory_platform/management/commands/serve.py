"""`manage.py serve`: the one entry point that runs the platform (used by `make run` and Docker)."""

from __future__ import annotations

import os
import secrets
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.db import connections, transaction

from organizations.models import Organization, Role, User
from organizations.principal import Principal
from organizations.services import organization_create, token_create

DEMO_ORGANIZATION = "demo"
ADMIN_USERNAME = "admin"


class Command(BaseCommand):
    help = "Prepare the database (migrate, demo organization, admin login) and serve the platform over ASGI."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument(
            "--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", "1")), help="ASGI worker processes."
        )
        parser.add_argument(
            "--no-demo", action="store_true", help="Do not create the demo organization and admin login."
        )
        parser.add_argument(
            "--prepare-only", action="store_true", help="Prepare everything, then exit without serving."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write("Preparing the database…")
        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        notes: list[str] = []
        if not options["no_demo"]:
            notes += self._demo_organization()
            notes += self._admin_login()
        connections.close_all()

        database = f"embedded PostgreSQL in {settings.DATA_DIR}" if settings.EMBEDDED_DATABASE else "DATABASE_URL"
        base = f"http://{options['host']}:{options['port']}"
        lines = [
            "",
            "Memory Platform is ready.",
            f"  Admin:   {base}/admin/",
            f"  MCP:     {base}/mcp",
            f"  Health:  {base}/healthz",
            f"  Database: {database}",
            *notes,
            "",
        ]
        self.stdout.write("\n".join(lines))
        if options["prepare_only"]:
            return

        import uvicorn

        uvicorn.run(
            "memory_platform.asgi:application",
            host=options["host"],
            port=options["port"],
            workers=options["workers"],
            lifespan="off",
            log_level="info",
        )

    def _demo_organization(self) -> list[str]:
        if Organization.objects.filter(slug=DEMO_ORGANIZATION).exists():
            return [
                f"  Demo organization '{DEMO_ORGANIZATION}' exists; its token was printed on the first run.",
                "  Another token:  .venv/bin/python manage.py create_token "
                f"--organization {DEMO_ORGANIZATION} --role agent",
            ]
        with transaction.atomic():
            organization = organization_create(slug=DEMO_ORGANIZATION, name="Demo", operator="serve")
            issued = token_create(
                principal=Principal.for_operator(organization, "serve"), role=Role.AGENT, name="demo agent"
            )
        return [
            f"  Demo organization '{DEMO_ORGANIZATION}' created.",
            f"  Agent token (shown once, store it now): {issued.raw}",
        ]

    def _admin_login(self) -> list[str]:
        if User.objects.filter(username=ADMIN_USERNAME).exists():
            return [
                f"  Admin login '{ADMIN_USERNAME}' exists; its password was printed on the first run.",
                f"  Reset it with:  .venv/bin/python manage.py changepassword {ADMIN_USERNAME}",
            ]
        password = secrets.token_urlsafe(12)
        User.objects.create_superuser(username=ADMIN_USERNAME, email="", password=password)
        return [f"  Admin login (shown once): {ADMIN_USERNAME} / {password}"]
