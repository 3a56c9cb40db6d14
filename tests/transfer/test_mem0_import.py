"""mem0's memories (its get_all() saved as JSON) come in as organization memories, mem0's own
account of each kept in the metadata; importing the file again adds nothing; a malformed item
writes nothing; a credential is refused as any write's is."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memories.models import Memory
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db

# As mem0's Memory.get_all(user_id="alice") returns them.
GET_ALL = {
    "results": [
        {
            "id": "892db2ae-06d9-49e5-8b3e-585ef9b85b8e",
            "memory": "Prefers vegetarian food",
            "hash": "e5d0d6e3b7a8c2f9d1c4b6a3e8f7d2c1",
            "metadata": {"categories": ["food", "preferences"]},
            "created_at": "2024-07-20T01:20:58.162513-07:00",
            "updated_at": None,
            "user_id": "alice",
        },
        {
            "id": "6e9a7b1f-2c3d-4e5f-8a9b-0c1d2e3f4a5b",
            "memory": "Works on the payments team and deploys on Tuesdays",
            "hash": "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
            "metadata": None,
            "created_at": "2024-07-21T09:00:00-07:00",
            "updated_at": "2024-07-22T10:00:00-07:00",
            "user_id": "alice",
            "agent_id": "support-bot",
        },
    ]
}


def _import(path: Path) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_mem0", str(path), "--organization", "acme", stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_mem0_memories_come_in_once(acme: Tenant, tmp_path: Path) -> None:
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps(GET_ALL))

    said, _ = _import(source)

    assert "2 memories created, 0 already there, 0 refused" in said
    food = Memory.objects.get(organization=acme.organization, current_content="Prefers vegetarian food")
    assert food.memory_type == "fact" and food.tags == ["food", "preferences"]
    assert food.metadata["mem0_id"] == "892db2ae-06d9-49e5-8b3e-585ef9b85b8e"
    assert food.metadata["mem0_user_id"] == "alice" and food.metadata["mem0_hash"].startswith("e5d0")
    again, _ = _import(source)
    assert "0 memories created, 2 already there" in again
    source.write_text(json.dumps(GET_ALL["results"]))  # the list alone reads the same
    assert "2 already there" in _import(source)[0]


def test_a_malformed_item_writes_nothing_and_a_credential_is_refused(acme: Tenant, tmp_path: Path) -> None:
    broken = {"results": [*GET_ALL["results"], {"id": "x"}]}
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps(broken))
    with pytest.raises(CommandError, match=r'item 2 \(x\): no text in "memory"; nothing was imported'):
        _import(source)
    assert not Memory.objects.filter(organization=acme.organization, metadata__has_key="mem0_id").exists()

    leaked = {"results": [{"id": "k1", "memory": "The deploy key is AKIAIOSFODNN7EXAMPLE"}]}
    source.write_text(json.dumps(leaked))
    said, refused = _import(source)
    assert "0 memories created, 0 already there, 1 refused" in said
    assert "credentials are never stored" in refused
