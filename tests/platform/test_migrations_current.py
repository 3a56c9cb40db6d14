"""The migrations say what the models say: a model changed without its migration fails here (and
would fail in production, where nothing runs makemigrations)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_no_model_change_lacks_its_migration() -> None:
    out = StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit as exit_:
        pytest.fail(f"makemigrations would write migrations (exit {exit_.code}):\n{out.getvalue()}")
