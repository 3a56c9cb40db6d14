"""`manage.py serve` collects the static files on every start: files whose compressed copies are
current are not compressed again, a file collected anew is (memory_platform.staticfiles)."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any

from django.core.management import call_command

ADMIN_CSS = Path("admin") / "css" / "base.css"


def _collect() -> int:
    """Collect the static files; how many compressed copies were written."""
    out = io.StringIO()
    call_command("collectstatic", interactive=False, verbosity=1, stdout=out)
    counted = re.search(r"(\d+) post-processed", out.getvalue())
    return int(counted[1]) if counted else 0


def test_only_files_collected_anew_are_compressed_again(settings: Any, tmp_path: Path) -> None:
    settings.STATIC_ROOT = tmp_path
    first = _collect()
    assert first > 20, "the admin's and the API docs' files are compressed"
    assert (tmp_path / f"{ADMIN_CSS}.gz").exists()

    assert _collect() == 0

    # A file older than its source is collected again (a new modification time): only its copies are made again.
    os.utime(tmp_path / ADMIN_CSS, (0, 0))
    assert _collect() == 1
    gz = (tmp_path / f"{ADMIN_CSS}.gz").stat()
    assert abs(gz.st_mtime - (tmp_path / ADMIN_CSS).stat().st_mtime) < 0.001
