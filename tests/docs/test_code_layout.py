"""The house rules of the code's layout that no linter checks: modules stay small enough to read."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

APPS = (
    "code_index", "curation", "instructions", "knowledge", "lifecycle", "mcp_api", "memories",
    "memory_platform", "organizations", "rest_api", "screening",
)  # fmt: skip
MAX_LINES = 400
# Django's settings module holds every setting until each app reads its own (a typed settings
# object per app); it is configuration, not logic.
LONGER = {"memory_platform/settings.py"}


def test_no_module_of_the_apps_is_over_400_lines() -> None:
    base = Path(settings.BASE_DIR)
    long = {
        str(path.relative_to(base)): len(path.read_text().splitlines())
        for app in APPS
        for path in (base / app).rglob("*.py")
        if "migrations" not in path.parts
    }
    over = {name: lines for name, lines in long.items() if lines > MAX_LINES and name not in LONGER}

    assert over == {}, f"split these by job (CONTRIBUTING.md, 'Where code goes'): {over}"
