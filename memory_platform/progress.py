"""Progress bars of management commands (tqdm) on the command's stderr."""

from __future__ import annotations

from django.core.management.base import OutputWrapper


class ProgressStream:
    """tqdm redraws its bar with carriage returns; the command's stderr wrapper would add newlines
    and colour it as an error."""

    def __init__(self, out: OutputWrapper) -> None:
        self._out = out

    def write(self, text: str) -> None:
        self._out.write(text, style_func=str, ending="")

    def flush(self) -> None:
        self._out.flush()
