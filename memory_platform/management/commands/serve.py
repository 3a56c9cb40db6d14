"""`manage.py serve`: the one entry point that runs the platform (used by `make run` and Docker)."""

from __future__ import annotations

import os
import secrets
import signal
import socket
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.db import connections, transaction

from memory_platform import metrics, readiness, web
from memory_platform.env import env_bool
from memory_platform.worker import BackgroundWorker
from organizations.models import Organization, Role, User
from organizations.principal import Principal
from organizations.services import organization_create
from organizations.tokens import token_create

DEMO_ORGANIZATION = "demo"
ADMIN_USERNAME = "admin"


class Command(BaseCommand):
    help = "Prepare the database (migrate, demo organization, admin login) and serve the platform (WSGI, granian)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument(
            "--workers",
            type=int,
            default=int(os.environ.get("WEB_CONCURRENCY", "0")),
            help="Web processes (WEB_CONCURRENCY; default: one per core this process may use).",
        )
        parser.add_argument(
            "--no-demo", action="store_true", help="Do not create the demo organization and admin login."
        )
        parser.add_argument(
            "--prepare-only", action="store_true", help="Prepare everything, then exit without serving."
        )
        parser.add_argument(
            "--no-worker",
            action="store_true",
            help="Do not start the Celery worker and beat (they run as their own services). Also RUN_WORKER=0.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        workers, model_threads = web_processes(options["workers"])
        self.stdout.write("Preparing the database…")
        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        notes: list[str] = []
        if not options["no_demo"]:
            notes += self._demo_organization()
            notes += self._admin_login()
        connections.close_all()

        database = f"embedded PostgreSQL in {settings.DATA_DIR}" if settings.EMBEDDED_DATABASE else "DATABASE_URL"
        if options["port"] == 0:  # any free port: chosen here, so that the banner and "ready" name it
            options["port"] = _free_port(options["host"])
        base = f"http://{options['host']}:{options['port']}"
        lines = [
            f"  Admin:   {base}/admin/",
            f"  MCP:     {base}/mcp",
            f"  REST:    {base}/api/v1/  (docs {base}/api/docs/, schema {base}/api/schema/)",
            f"  Health:  {base}/healthz",
            f"  Web:     {workers} process{'es' if workers > 1 else ''} (WEB_CONCURRENCY), {web.threads()} threads"
            f" (WEB_THREADS) and {model_threads} embedding model thread(s) (EMBEDDING_THREADS) each",
            f"  Database: {database}",
            *notes,
        ]
        if options["prepare_only"]:
            self.stdout.write("\n".join(["", "Memory Platform is prepared.", *lines, ""]))
            return

        _metrics_directory()
        worker: BackgroundWorker | None = None
        if options["no_worker"] or not env_bool("RUN_WORKER", True):
            lines.append("  Worker:  not started here (--no-worker or RUN_WORKER=0); run it as its own service.")
        else:
            worker = BackgroundWorker(
                log_file=settings.DATA_DIR / "worker.log", schedule_file=Path(settings.CELERY_BEAT_SCHEDULE_FILENAME)
            )
        # SIGINT and SIGTERM stop the web server, which then returns (running the `finally` below,
        # which stops the worker); until it runs, SIGTERM exits the same way.
        previous_handler = signal.signal(signal.SIGTERM, _exit_on_signal)
        try:
            if worker is not None:
                worker.start()
                broker = "Redis (REDIS_URL)" if settings.REDIS_URL else f"files in {settings.CELERY_BROKER_DIR}"
                lines.append(f"  Worker:  Celery worker + beat running (pid {worker.pid}), broker: {broker}")
                lines.append(f"           log: {worker.log_file}")
            # What to connect to now (the token shown once must never wait); "ready" once it is: the
            # web server answers and the worker has said it is alive.
            self.stdout.write("\n".join(["", "Starting Memory Platform…", *lines, ""]))
            self.stdout.flush()
            readiness.announce(self.stdout, base, wait_for_worker=worker is not None)

            # The web processes' share of the cores; the worker above keeps its own setting.
            os.environ["EMBEDDING_THREADS"] = str(model_threads)
            web.serve(options["host"], options["port"], workers=workers)
        finally:
            if worker is not None:
                self.stdout.write("Stopping the worker…")
                worker.stop()
            signal.signal(signal.SIGTERM, previous_handler)

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


def _metrics_directory() -> None:
    """Where the web processes and the worker write their metrics for /metrics to add up
    (PROMETHEUS_MULTIPROC_DIR, var/run/metrics unless set), cleared of what this machine's ended
    processes left: a past run's counts must not add up again, while another replica sharing the
    directory keeps its own."""
    directory = Path(os.environ.get("PROMETHEUS_MULTIPROC_DIR") or settings.DATA_DIR / "run" / "metrics")
    directory.mkdir(parents=True, exist_ok=True)
    metrics.forget_dead_processes(directory, counts=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(directory)


def web_processes(asked: int) -> tuple[int, int]:
    """How many web processes to run (``asked``, or one per core), and the model threads of each.

    Python code runs one thread at a time in a process, so a process keeps about one core busy:
    one process per core serves concurrent clients on every core. Each process's embedding model
    then gets its share of the cores (EMBEDDING_THREADS, unless set), not all of them, so the
    processes' model threads do not outnumber the cores.
    """
    cores = len(os.sched_getaffinity(0)) or 1
    workers = asked if asked > 0 else cores
    threads = settings.EMBEDDING_THREADS or max(1, cores // workers)
    return workers, threads


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _exit_on_signal(signum: int, frame: FrameType | None) -> NoReturn:
    # Asked to stop and stopped cleanly: a success, as after Ctrl-C.
    raise SystemExit(0)
