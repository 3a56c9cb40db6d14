"""Loaded before Django reads its settings (``-p tests.process_env`` in pyproject.toml): what each
test process needs of its own in the environment."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

# Rate-limit counters live in a file cache shared by a machine's web processes. Each test process
# (pytest-xdist runs two) gets one of its own: another process clearing its cache must not reset
# this one's counts in the middle of a test.
os.environ["CACHE_DIR"] = tempfile.mkdtemp(prefix="memory-platform-test-cache-")
atexit.register(shutil.rmtree, os.environ["CACHE_DIR"], ignore_errors=True)
