"""Credentials never stored, through every path a write takes: refused naming kind and place (never
the value), or redacted where the organization says so, and never in versions, audit or embeddings."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from code_index.models import CodeChunk
from knowledge.services import triple_assert
from lifecycle.services import memories_consolidate
from memories.decisions import memory_delete
from memories.embedding_pipeline import embedding_text
from memories.models import Memory, MemoryVersion
from memories.services import memory_create, memory_update
from memories.write_policy import write_policy_update
from memory_platform.exceptions import ValidationError
from organizations.models import AuditEvent, Membership, Role, User
from organizations.services import repository_get_or_create
from tests.code_index.conftest import sync_files
from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.rest_api.conftest import API, client_with, error_of
from tests.trust.attacks import CREDENTIALS, secret_part

pytestmark = pytest.mark.django_db

KEY = CREDENTIALS["AWS Access Key"]
TOKEN = CREDENTIALS["GitHub Token"]
FACT = {"scope_type": "organization", "memory_type": "fact"}


def _nothing_holds(acme: Tenant, *credentials: str) -> None:
    """No memory, version, audit event or triple of acme holds any of the credentials."""
    parts = [secret_part(credential) for credential in credentials]
    stored = [
        *(str(m.__dict__) for m in Memory.objects.filter(organization=acme.organization)),
        *(f"{v.snapshot} {v.reason}" for v in MemoryVersion.objects.filter(memory__organization=acme.organization)),
        *(f"{e.reason} {e.data}" for e in AuditEvent.objects.filter(organization=acme.organization)),
    ]
    assert not [part for part in parts if any(part in text for text in stored)]


def test_mcp_write_and_update_are_refused_naming_kind_and_line(acme: Tenant, agent: McpClient) -> None:
    refused = agent.error("memory-write", {**FACT, "current_content": f"Deploy notes.\nkey {KEY}"})
    existing = agent.ok("memory-write", {**FACT, "current_content": "Deploy notes."})
    updated = agent.error("memory-update", {"id": existing["id"], "metadata": {"token": TOKEN}})

    assert "AWS Access Key in current_content, line 2" in refused and KEY not in refused
    assert "GitHub Token in metadata.token" in updated and TOKEN not in updated
    _nothing_holds(acme, KEY, TOKEN)


def test_rest_create_update_and_batch_are_refused_with_the_details(acme: Tenant) -> None:
    api = client_with(acme.raw_tokens["agent"])
    created = error_of(api.post(f"{API}/memories/", {**FACT, "current_content": "x", "source": {"ci": TOKEN}}), 422)
    memory = api.post(f"{API}/memories/", {**FACT, "current_content": "Deploy notes."}).json()
    updated = error_of(api.patch(f"{API}/memories/{memory['id']}/", {"title": f"key {KEY}"}), 422)
    batch = api.post(
        f"{API}/memories/batch/",
        {"memories": [{**FACT, "current_content": "fine"}, {**FACT, "current_content": KEY}]},
    ).json()

    assert created["details"]["credentials"] == [{"kind": "GitHub Token", "field": "source.ci", "line": 1}]
    assert updated["details"]["credentials"][0]["kind"] == "AWS Access Key"
    assert (batch["created"], batch["failed"]) == (1, 1)
    assert "AWS Access Key" in batch["results"][1]["error"]["message"]
    for error in (created, updated, batch["results"][1]["error"]):
        assert secret_part(TOKEN) not in str(error) and secret_part(KEY) not in str(error)
    _nothing_holds(acme, KEY, TOKEN)


def test_reasons_knowledge_and_merged_texts_are_screened_too(acme: Tenant) -> None:
    memory, _ = memory_create(principal=acme.agent, data={**FACT, "current_content": "Deploy notes."})
    twin, _ = memory_create(principal=acme.agent, data={**FACT, "current_content": "Deploy notes!"})

    memory_delete(principal=acme.agent, memory_id=twin.pk, reason=f"it had {KEY} in an old draft")
    with pytest.raises(ValidationError, match="AWS Access Key in object"):
        triple_assert(principal=acme.agent, subject="ci", predicate="uses_key", object=KEY)
    with pytest.raises(ValidationError, match="GitHub Token in content"):
        memories_consolidate(principal=acme.agent, memory_ids=[memory.pk, twin.pk], content=f"Deploy with {TOKEN}")

    assert "[REDACTED: AWS Access Key]" in MemoryVersion.objects.get(memory=twin, change="delete").reason
    _nothing_holds(acme, KEY, TOKEN)


def test_the_admin_form_shows_the_refusal(acme: Tenant, client: Client) -> None:
    curator = User.objects.create_user(username="cleo", password="unused-password-1", is_staff=True)
    Membership.objects.create(user=curator, organization=acme.organization, role=Role.CURATOR)
    client.force_login(curator)

    response = client.post(
        reverse("admin:memories_memory_add"),
        {"organization": acme.organization.pk, "scope_type": "organization", "memory_type": "fact",
         "title": "", "current_content": f"key {KEY}", "status": "draft", "importance": 1, "metadata": "{}",
         "tags": "", "source": "{}", "reason": "testing"},
    )  # fmt: skip

    assert response.status_code == 200
    assert "credentials are never stored" in response.content.decode()
    assert secret_part(KEY) not in response.content.decode().split("current_content", 1)[0]
    _nothing_holds(acme, KEY)


def test_where_the_policy_says_so_credentials_are_redacted_everywhere(acme: Tenant) -> None:
    write_policy_update(principal=acme.admin, data={"credentials": "redact"}, reason="agents paste config")

    memory, _ = memory_create(
        principal=acme.agent, data={**FACT, "current_content": f"Deploy with:\n{KEY}\nthen tag.", "tags": [TOKEN]}
    )
    changed = memory_update(principal=acme.agent, memory_id=memory.pk, data={"metadata": {"k": TOKEN}})

    assert memory.current_content == "Deploy with:\n[REDACTED: AWS Access Key]\nthen tag."
    assert memory.tags == ["[redacted: github token]"]
    assert changed.metadata == {"k": "[REDACTED: GitHub Token]"}
    assert {flag["code"] for flag in changed.review_flags} >= {"credentials"}
    assert "[REDACTED: AWS Access Key]" in embedding_text(memory.title, memory.current_content)
    _nothing_holds(acme, KEY, TOKEN)


def test_the_code_index_stores_code_with_its_credentials_redacted(acme: Tenant) -> None:
    repository_get_or_create(principal=acme.admin, slug="api")
    sync_files(
        acme.agent,
        "api",
        {
            "deploy.py": f'AWS_KEY = "{KEY}"\n\n\ndef deploy():\n    """Ship it."""\n    return AWS_KEY\n',
            "settings.yaml": f"github:\n  token: {TOKEN}\n",
        },
    )

    chunks = "\n".join(CodeChunk.objects.values_list("content", flat=True))
    assert "[REDACTED: AWS Access Key]" in chunks
    assert secret_part(KEY) not in chunks and secret_part(TOKEN) not in chunks
