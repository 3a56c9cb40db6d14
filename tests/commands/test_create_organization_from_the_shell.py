"""One real run of `manage.py create_organization`, as an operator types it.

The child process is pointed at this test run's database (not the real one) through
DATABASE_URL, and the test is transactional so the child's committed rows are visible here and
flushed afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.db import connection

from organizations.models import Organization, Role
from organizations.tokens import principal_for_token

pytestmark = pytest.mark.processes

MANAGE_PY = Path(__file__).resolve().parents[2] / "manage.py"


def _manage(*args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    settings = connection.settings_dict
    url = f"postgresql://{quote(settings['USER'])}@/{quote(settings['NAME'])}?host={quote(settings['HOST'])}"
    env = {**os.environ, "DATABASE_URL": url, **extra_env}
    return subprocess.run(
        [sys.executable, str(MANAGE_PY), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.django_db(transaction=True)
def test_the_command_prints_json_with_a_token_that_works(transactional_db: Any) -> None:
    result = _manage("create_organization", "initech", "--name", "Initech", "--token-role", "curator", "--json")

    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["organization"] == "initech"
    assert payload["role"] == "curator"
    principal = principal_for_token(payload["token"])
    assert principal.organization == Organization.objects.get(slug="initech", name="Initech")
    assert principal.role == Role.CURATOR


@pytest.mark.django_db(transaction=True)
def test_a_refusal_exits_non_zero_with_the_message_on_stderr(transactional_db: Any) -> None:
    result = _manage("create_organization", "initech", "--token-role", "owner")

    assert result.returncode == 1
    assert result.stdout == ""
    assert "unknown role 'owner'; use one of: reader, agent, curator, admin" in result.stderr
    assert "Traceback" not in result.stderr
    assert not Organization.objects.filter(slug="initech").exists()


@pytest.mark.django_db(transaction=True)
def test_a_command_does_not_load_the_views(transactional_db: Any) -> None:
    """Django's system checks import every view (the MCP SDK with them) to check the URLs: a second
    of CPU a command never needs. The platform's commands leave them to serve, migrate and check."""
    result = _manage("create_organization", "initech", "--json", PYTHONPROFILEIMPORTTIME="1")

    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    imported = {line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")}
    assert "organizations.services" in imported  # what the command needs, so the listing is complete
    assert not imported & {"memory_platform.urls", "mcp_api.views", "mcp"}, "a command loaded the views"
