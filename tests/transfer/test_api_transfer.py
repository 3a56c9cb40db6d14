"""Admins export and import their organization over REST: the same JSON Lines as the commands."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from memories.models import Memory
from tests.conftest import MemoryFactory, Tenant
from tests.rest_api.conftest import client_with
from transfer.models import ImportRun

pytestmark = pytest.mark.django_db


def test_an_admin_exports_and_imports_the_organization(acme: Tenant, make_memory: MemoryFactory) -> None:
    make_memory(current_content="Deploys need two approvals.")
    make_memory(current_content="Refunds go through the ledger.")
    admin = client_with(acme.raw_tokens["admin"])

    exported = admin.get("/api/v1/export/")
    body = b"".join(exported.streaming_content)
    lines = [json.loads(line) for line in body.splitlines()]

    assert exported.status_code == 200 and exported["Content-Type"] == "application/x-ndjson"
    assert 'filename="acme.jsonl"' in exported["Content-Disposition"]
    assert lines[0]["kind"] == "manifest" and lines[0]["organization"]["slug"] == "acme"
    assert lines[-1] == {"kind": "end", "counts": lines[-1]["counts"]} and lines[-1]["counts"]["memory"] == 2
    assert all("embedding" not in line.get("fields", {}) for line in lines)

    imported = admin.post("/api/v1/import/", body, content_type="application/x-ndjson")

    assert imported.status_code == 200, imported.content
    assert imported.json()["counts"]["memory"] == 2 and imported.json()["pending_embeddings"] == 2
    assert Memory.objects.filter(organization=acme.organization).count() == 4, "new ids: beside the originals"
    run = ImportRun.objects.get(pk=imported.json()["run"])
    assert (run.status, run.organization_id, imported.json()["resumed_from"]) == ("completed", acme.organization.pk, 0)


def test_only_admins_may_and_a_bad_file_changes_nothing(acme: Tenant, globex: Tenant) -> None:
    for role in ("reader", "agent", "curator"):
        client = client_with(acme.raw_tokens[role])
        assert client.get("/api/v1/export/").status_code == 403, role
        assert client.post("/api/v1/import/", b"", content_type="application/x-ndjson").status_code == 403, role
    outsider = client_with(globex.raw_tokens["admin"])
    first = json.loads(b"".join(outsider.get("/api/v1/export/").streaming_content).splitlines()[0])
    assert first["organization"]["slug"] == "globex", "an admin exports their own organization only"

    before = Memory.objects.count()
    refused = client_with(acme.raw_tokens["admin"]).post(
        "/api/v1/import/", b'{"kind": "manifest"}\n', content_type="application/x-ndjson"
    )

    assert refused.status_code == 400
    assert "not an export of this platform" in refused.json()["error"]["message"] + json.dumps(refused.json())
    assert Memory.objects.count() == before


def test_an_unauthenticated_caller_gets_nothing() -> None:
    assert APIClient(HTTP_HOST="localhost").get("/api/v1/export/").status_code == 401
