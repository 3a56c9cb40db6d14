"""Which statements the tenancy guard holds to "no join across organizations": the platform's
own, told apart from the tests' and the migrations' by the frames that ran them. Shared by the guard
in the test processes (tests.tenancy_guard) and the one in the processes they start
(tests.tenancy_child), so it imports neither pytest nor Django.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
_LIBRARIES = (str(ROOT / ".venv"),)
# A statement whose nearest platform frame is one of these is a test's own (or a benchmark's).
_TESTS = ("tests/", "bench/")
# A statement run from one of these is a migration's.
_MIGRATIONS = ("/migrations/", "memory_platform/db/migration_ops.py")

# Statements the platform runs that read two organizations' rows together, by the function that
# runs them ("path function"), and why that is right.
KNOWN = {
    "memories/search/features.py _rows": (
        "a search's session neighbours: the memories are looked up by the ids a CTE found within the"
        " scope (the organization's, or system-scope memories); a lookup by ids, not a join"
    ),
}


def callers(frame: FrameType) -> list[str]:
    """The platform's own frames on the stack from ``frame`` out, innermost first ("path:line function")."""
    root = str(ROOT) + "/"
    return [
        f"{frame.f_code.co_filename.removeprefix(root)}:{line} {frame.f_code.co_name}"
        for frame, line in traceback.walk_stack(frame)
        if frame.f_code.co_filename.startswith(root) and not frame.f_code.co_filename.startswith(_LIBRARIES)
    ]


def held_to_it(callers: list[str], *, platform_only: bool = False) -> bool:
    """Whether the platform's code ran it (not a test's own statement, nor a migration), and it is
    not a known exception. ``platform_only``: in a process that runs nothing but the platform (a
    server a test started), a statement with no platform frame (a library's own) is held too."""
    if not callers:
        return platform_only
    if callers[0].startswith(_TESTS):
        return False
    if any(marker in caller for caller in callers for marker in _MIGRATIONS):
        return False
    path, _, function = callers[0].partition(" ")
    return f"{path.rpartition(':')[0]} {function}" not in KNOWN
