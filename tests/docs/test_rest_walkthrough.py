"""The REST guide's walkthrough works when pasted: run it with bash against a live server."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from memories.models import Memory, Status
from organizations.models import Organization

GUIDE = Path(settings.BASE_DIR) / "docs" / "guides" / "rest.md"
DOCUMENTED_BASE = "http://127.0.0.1:8000"
BASH = shutil.which("bash") or "/bin/bash"


def walkthrough() -> str:
    match = re.search(r"<!-- walkthrough -->\s*```sh\n(.*?)```", GUIDE.read_text(), re.DOTALL)
    assert match, "docs/guides/rest.md lost its <!-- walkthrough --> shell block"
    return match.group(1)


@pytest.mark.django_db(transaction=True)
def test_the_curl_walkthrough_runs_as_written(mcp_server: str, server_env: dict[str, str]) -> None:
    Organization.objects.create(slug="demo", name="Demo")
    script = walkthrough()
    assert DOCUMENTED_BASE in script
    result = subprocess.run(
        [BASH, "-euo", "pipefail", "-c", script.replace(DOCUMENTED_BASE, mcp_server)],
        cwd=settings.BASE_DIR,
        env=server_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    memory: Any = Memory.objects.get(organization__slug="demo")
    # What the script prints: the best search hit's title, the status after locking, and the
    # error code the agent gets when it tries to change the locked memory.
    assert result.stdout.splitlines() == [memory.title, "locked", "locked"]
    assert memory.status == Status.LOCKED
    assert memory.importance == 9
    assert memory.created_by_token.name == "release-bot"
