"""Markdown notes with YAML front matter (Obsidian vaults, basic-memory) in and out: written from an
organization and read into another they give the same memories; read again they add nothing; a
folder with one bad note writes nothing; a credential in a note is screened as any write is."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memories.models import Memory
from organizations.services import organization_create
from tests.conftest import MemoryFactory, Tenant

pytestmark = pytest.mark.django_db

FIELDS = ("title", "memory_type", "scope_type", "current_content", "tags", "importance")


def _memories(slug: str) -> list[tuple[object, ...]]:
    rows = Memory.objects.filter(organization__slug=slug, deleted_at__isnull=True).values_list(
        *FIELDS, "repository__slug"
    )
    return sorted(rows)


def test_notes_written_from_one_organization_read_into_another_are_the_same_memories(
    acme: Tenant, make_memory: MemoryFactory, tmp_path: Path
) -> None:
    make_memory(current_content="Deploys need two approvals.", memory_type="business_rule", tags=["deploys"])
    make_memory(current_content="We chose PostgreSQL for search.", memory_type="decision_log", importance=9)
    make_memory(
        current_content="The payments API retries three times.", scope_type="repository", repository="payments-api"
    )
    notes = tmp_path / "vault"
    call_command("export_markdown", "acme", "--output", str(notes), stdout=io.StringIO())
    assert len(list(notes.rglob("*.md"))) == 3
    organization_create(slug="notes", name="Notes")

    out = io.StringIO()
    call_command("import_markdown", str(notes), "--organization", "notes", stdout=out)

    assert "3 memories created, 0 already there, 0 refused" in out.getvalue()
    assert _memories("notes") == _memories("acme")
    again = io.StringIO()
    call_command("import_markdown", str(notes), "--organization", "notes", stdout=again)
    assert "0 memories created, 3 already there" in again.getvalue()
    assert Memory.objects.filter(organization__slug="notes").count() == 3


def test_a_folder_with_one_bad_note_writes_nothing_and_names_it(acme: Tenant, tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("---\ntitle: Fine\ntype: fact\n---\nA fine note.\n")
    (tmp_path / "bad.md").write_text("---\ntitle: Odd\ntype: rumour\n---\nA note of an unknown type.\n")
    (tmp_path / "broken.md").write_text("---\ntitle: [unclosed\n---\nBroken front matter.\n")
    before = Memory.objects.count()

    with pytest.raises(CommandError) as refused:
        call_command("import_markdown", str(tmp_path), "--organization", "acme")

    message = str(refused.value)
    assert "bad.md: " in message and "rumour" in message
    assert "broken.md: the front matter is not YAML" in message
    assert "nothing was imported" in message
    assert Memory.objects.count() == before


def test_a_note_without_front_matter_is_a_fact_and_a_credential_is_screened(acme: Tenant, tmp_path: Path) -> None:
    (tmp_path / "plain.md").write_text("Releases happen on Tuesdays.\n")
    secret = "AKIAIOSFODNN7EXAMPLE"
    (tmp_path / "leak.md").write_text(
        f"The deploy key is {secret} with secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY.\n"
    )
    out, err = io.StringIO(), io.StringIO()

    call_command("import_markdown", str(tmp_path), "--organization", "acme", stdout=out, stderr=err)

    plain = Memory.objects.get(organization=acme.organization, current_content="Releases happen on Tuesdays.")
    assert plain.memory_type == "fact" and plain.scope_type == "organization"
    assert not Memory.objects.filter(current_content__contains=secret).exists()
    assert "1 memories created, 0 already there, 1 refused" in out.getvalue()
    assert "refused leak.md: credentials are never stored" in err.getvalue()
