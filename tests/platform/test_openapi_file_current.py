"""docs/openapi.yaml, the committed copy of the REST schema, matches what the server serves."""

from __future__ import annotations

import io
from pathlib import Path

from django.conf import settings
from django.core.management import call_command

SCHEMA_FILE = Path(settings.BASE_DIR) / "docs" / "openapi.yaml"


def test_the_committed_schema_is_the_generated_one() -> None:
    generated = io.StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=generated)
    assert SCHEMA_FILE.read_text() == generated.getvalue(), (
        "docs/openapi.yaml is stale: run `.venv/bin/python manage.py spectacular --file docs/openapi.yaml`"
    )
