"""Whatever value a field of an import holds, the import either stores a row or refuses the file with
ImportProblem (a 400 over REST, the command's error): never another exception."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest
from django.db import transaction

from organizations.models import Organization
from tests.conftest import MemoryFactory, Tenant
from transfer.export import export_organization
from transfer.importer import ImportProblem, import_organization

pytestmark = pytest.mark.django_db

HOSTILE: list[Any] = [{"nested": [1, {"a": None}]}, "not-a-value", 10**30, ["a", 1]]
# One record of each: a memory (its vector too), a version, a token (a unique prefix), an audit event.
KINDS = ("memory", "memory_version", "api_token", "audit_event")


def test_no_value_of_any_field_breaks_the_import(acme: Tenant, make_memory: MemoryFactory) -> None:
    make_memory(current_content="The payments API retries.", scope_type="repository", repository="payments-api")
    out = io.StringIO()
    export_organization(acme.organization, out, embeddings=True)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    tried = 0
    first = {kind: next(i for i, line in enumerate(lines) if line["kind"] == kind) for kind in KINDS}
    for index in first.values():
        line = lines[index]
        for name in line["fields"]:
            for value in HOSTILE:
                changed = json.loads(json.dumps(lines))
                changed[index]["fields"][name] = value
                body = "".join(json.dumps(item) + "\n" for item in changed).encode()
                with transaction.atomic():  # each try is undone: the next starts from the same platform
                    with contextlib.suppress(ImportProblem):
                        import_organization(io.BytesIO(body), slug="fuzzed", create=True, new_ids=True)
                    transaction.set_rollback(True)
                tried += 1
    assert not Organization.objects.filter(slug="fuzzed").exists()
    assert tried > 100
