"""What a process imports is what it serves: the MCP SDK (a second of CPU to import) is loaded by a
web process as it starts, never by a command or a worker that only checks the URLconf."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from django.conf import settings

pytestmark = pytest.mark.processes

PROBE = """
import json, sys
import django
django.setup()
from django.core.checks import run_checks
from memory_platform.celery import app
run_checks()  # what every management command and a Celery worker's start do
app.loader.import_default_modules()  # a worker's tasks
after_checks = sorted(name for name in ("mcp", "mcp_api.views") if name in sys.modules)
import memory_platform.wsgi
print(json.dumps({"after_checks": after_checks, "web_process": "mcp_api.views" in sys.modules}))
"""


def test_the_mcp_sdk_is_imported_by_web_processes_alone(server_env: dict[str, str]) -> None:
    probe = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=settings.BASE_DIR, env=server_env,
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip

    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout.strip().splitlines()[-1])
    assert found["after_checks"] == [], "checking the URLconf and loading the tasks import no MCP"
    assert found["web_process"], "a web process has the MCP endpoint loaded before its first request"
