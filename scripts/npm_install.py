"""``npm ci`` for the checks' pinned Node tools, bounded in time: an attempt that has not finished in
ATTEMPT_SECONDS is cut off and made again, up to ATTEMPTS times, so a registry fetch that never
ends (one held a CI run for 24 minutes) costs minutes and then says what happened."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ATTEMPTS = 3
ATTEMPT_SECONDS = 300


def npm_ci(directory: Path) -> None:
    """Install ``directory``'s package-lock.json exactly (``npm ci``)."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund"],  # noqa: S607 - npm from the PATH, as a developer runs it
                cwd=directory,
                check=True,
                timeout=ATTEMPT_SECONDS,
            )
            return
        except subprocess.TimeoutExpired:
            print(f"npm ci in {directory} did not finish in {ATTEMPT_SECONDS} s (attempt {attempt})", file=sys.stderr)
    raise SystemExit(
        f"npm ci in {directory} did not finish in {ATTEMPT_SECONDS} s, {ATTEMPTS} times: is the npm registry answering?"
    )
