"""The static files' storage: WhiteNoise's, compressing only what changed.

``manage.py serve`` collects the static files on every start. WhiteNoise compresses every one of
them each time (0.8 s of CPU for the admin's and the API docs' files), although a compressed copy
made earlier is still right: it carries its file's modification time, and a file collected again
gets a new one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from whitenoise.storage import CompressedStaticFilesStorage

# WhiteNoise gives a compressed copy its file's modification time through a float: equal to within this.
_SAME_TIME_NS = 1_000_000


class ChangedFilesCompressedStorage(CompressedStaticFilesStorage):
    """WhiteNoise's CompressedStaticFilesStorage, leaving alone the files whose compressed copy is current."""

    def post_process(self, paths: dict[str, Any], dry_run: bool = False, **options: Any) -> Iterator[Any]:
        changed = {path: found for path, found in paths.items() if not self._compressed_copy_current(path)}
        yield from super().post_process(changed, dry_run=dry_run, **options)

    def _compressed_copy_current(self, path: str) -> bool:
        full = self.path(path)
        try:
            written = os.stat(full).st_mtime_ns
        except OSError:
            return False
        for suffix in (".br", ".gz"):
            try:
                if abs(os.stat(full + suffix).st_mtime_ns - written) < _SAME_TIME_NS:
                    return True
            except OSError:
                continue
        return False
