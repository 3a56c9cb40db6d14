"""The documentation's reference pages are the code's own account of itself: written by
scripts/docs_reference.py, and failing here when the code changed and they were not written again."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

pytestmark = pytest.mark.processes

SCRIPT = Path(settings.BASE_DIR) / "scripts" / "docs_reference.py"
sys.path.insert(0, str(SCRIPT.parent))

import docs_reference  # noqa: E402 - from scripts/, found through the path set above


def test_the_committed_reference_pages_match_the_code() -> None:
    command = [sys.executable, str(SCRIPT), "--check"]
    checked = subprocess.run(command, check=False, capture_output=True, text=True, timeout=120)

    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_environment_read_is_found_with_its_default() -> None:
    code = """
from memory_platform.env import env_bool, env_int, env_list, env_str
import os
A = env_int("A_LIMIT", 3)
B = env_bool("B_ON")
C = env_list("C_HOSTS", ["x", "y"])
D = os.environ.get("D_TOKEN", "")
E = os.environ["E_REQUIRED"]
os.environ["F_WRITTEN"] = "1"
G = env_int("G_COMPUTED", 60 * 60)
"""
    found = list(docs_reference._reads_in(ast.parse(code)))

    assert found == [
        ("A_LIMIT", "3"), ("B_ON", "false"), ("C_HOSTS", "x,y"), ("D_TOKEN", "empty"), ("E_REQUIRED", "required"),
        ("G_COMPUTED", None),
    ]  # fmt: skip


def test_every_variable_the_code_reads_is_explained_and_none_that_it_does_not() -> None:
    missing, dead = docs_reference.undocumented_variables()

    assert (missing, dead) == ([], [])
    assert {"DATABASE_URL", "SEARCH_MIN_SCORE", "MEMORY_PLATFORM_TOKEN"} <= {
        r.name for r in docs_reference.environment_reads()
    }


def test_the_workflow_page_prints_the_workflow_table() -> None:
    from memories import workflow

    page = (Path(settings.BASE_DIR) / "docs" / "reference" / "workflow.md").read_text()

    assert workflow.table_markdown() in page
