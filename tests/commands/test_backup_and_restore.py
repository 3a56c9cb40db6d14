"""`manage.py backup` writes the whole database with pg_dump; `manage.py restore` brings it back into
an empty database: here a fresh data directory's embedded PostgreSQL, where every memory, version
and token is found again. A database that holds data is never restored over."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from memories.models import Memory, MemoryVersion
from memories.services import memory_update
from memory_platform import embedded_db
from tests.conftest import MemoryFactory, Tenant

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

READ_BACK = """
import json
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("SELECT id::text, current_content, version FROM memories_memory ORDER BY id")
    memories = cursor.fetchall()
    cursor.execute("SELECT count(*) FROM memories_memoryversion")
    versions = cursor.fetchone()[0]
from organizations.tokens import principal_for_token
print(json.dumps({"memories": memories, "versions": versions, "org": principal_for_token(TOKEN).organization.slug}))
"""


def _manage(data_dir: Path, *args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TEST_DATABASE_NAME")}
    env["MEMORY_PLATFORM_DATA_DIR"] = str(data_dir)
    command = [sys.executable, "manage.py", *(args if code is None else ("shell", "-c", code))]
    return subprocess.run(
        command, check=False, cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=180
    )


def test_a_backup_restored_into_a_fresh_data_directory_has_every_memory(
    acme: Tenant, make_memory: MemoryFactory, tmp_path: Path
) -> None:
    memories = [make_memory(current_content=f"Rule {n}: deploys need {n} approvals.") for n in range(5)]
    memory_update(
        principal=acme.agent, memory_id=memories[0].pk, data={"current_content": "Deploys need one approval."}
    )
    backup = tmp_path / "platform.dump"

    call_command("backup", "--output", str(backup))
    assert backup.stat().st_size > 0

    fresh = tmp_path / "fresh"
    try:
        restored = _manage(fresh, "restore", str(backup))
        assert restored.returncode == 0, restored.stderr
        assert "restored" in restored.stdout and "5 memories" in restored.stdout
        token = acme.raw_tokens["agent"]
        read = _manage(fresh, code=READ_BACK.replace("TOKEN", repr(token)))
        assert read.returncode == 0, read.stderr
        found = json.loads(read.stdout.strip().splitlines()[-1])
    finally:
        embedded_db.stop(fresh)

    here = [[str(m.pk), m.current_content, m.version] for m in Memory.objects.order_by("id")]
    assert found["memories"] == here
    assert found["versions"] == MemoryVersion.objects.count()
    assert found["org"] == "acme", "the tokens work against the restored platform"


def test_nothing_is_restored_over_a_database_that_holds_data(acme: Tenant, tmp_path: Path) -> None:
    backup = tmp_path / "platform.dump"
    call_command("backup", "--output", str(backup))

    with pytest.raises(CommandError, match=r"already holds data .* restore into an empty one"):
        call_command("restore", str(backup))
    with pytest.raises(CommandError, match="exists; name a new file"):
        call_command("backup", "--output", str(backup))
    with pytest.raises(CommandError, match="is not a file"):
        call_command("restore", str(tmp_path / "missing.dump"))
