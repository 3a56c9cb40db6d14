"""An import is undone by the rows it made: they go, what the organization had stays, the undo is
audited, and the same file brings it all back. Work made since that depends on an imported row
(a new version, a link from the organization's own memory) holds the undo back, saying what."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from knowledge.links import link_create
from memories.models import Memory
from memories.services import memory_update
from organizations.models import AuditEvent
from tests.conftest import MemoryFactory, Tenant
from tests.rest_api.conftest import World
from tests.transfer.conftest import export_lines, write_lines
from transfer.importer import import_organization
from transfer.models import ImportRun

pytestmark = pytest.mark.django_db


def _import(path: Path, slug: str) -> ImportRun:
    with path.open("rb") as source:
        return import_organization(source, slug=slug, new_ids=True).run


def _undo(run: ImportRun) -> str:
    out = io.StringIO()
    call_command("undo_import", str(run.pk), "--reason", "imported into the wrong organization", stdout=out)
    return out.getvalue()


def test_an_undone_import_leaves_the_organization_as_it_was(
    acme: Tenant, globex: Tenant, rich: World, tmp_path: Path
) -> None:
    path = write_lines(export_lines("acme"), tmp_path / "acme.jsonl")
    before = sorted(Memory.objects.filter(organization=globex.organization).values_list("pk", flat=True))
    run = _import(path, "globex")
    assert Memory.objects.filter(organization=globex.organization).count() > len(before)

    said = _undo(run)

    assert said.startswith(f"undid import {run.pk}: removed ") and " memory" in said
    assert sorted(Memory.objects.filter(organization=globex.organization).values_list("pk", flat=True)) == before
    assert Memory.objects.filter(organization=acme.organization).exists(), "the source is untouched"
    run.refresh_from_db()
    assert run.status == "undone"
    event = AuditEvent.objects.get(organization=globex.organization, action="organization.import_undo")
    assert event.reason == "imported into the wrong organization"
    assert event.data["run"] == str(run.pk) and event.data["removed"]["memory"] > 0
    again = _import(path, "globex")  # the same file brings it back
    assert again.pk != run.pk and again.status == "completed"
    with pytest.raises(CommandError, match="is undone: only a completed import is undone"):
        _undo(run)


def _imported_into_globex(globex: Tenant, tmp_path: Path) -> tuple[ImportRun, Memory]:
    run = _import(write_lines(export_lines("acme"), tmp_path / "acme.jsonl"), "globex")
    imported = Memory.objects.filter(organization=globex.organization, status="active").first()
    assert imported is not None
    return run, imported


@pytest.mark.usefixtures("rich")
def test_a_version_made_since_holds_the_undo_back(globex: Tenant, tmp_path: Path) -> None:
    run, imported = _imported_into_globex(globex, tmp_path)
    memory_update(principal=globex.agent, memory_id=imported.pk, data={"current_content": "Edited since."})

    with pytest.raises(CommandError, match=r"cannot be undone: memory_version \S+, made after the import"):
        _undo(run)

    assert Memory.objects.get(pk=imported.pk).current_content == "Edited since."


@pytest.mark.usefixtures("rich")
def test_a_link_from_the_organizations_own_memory_holds_the_undo_back(
    globex: Tenant, make_memory: MemoryFactory, tmp_path: Path
) -> None:
    run, imported = _imported_into_globex(globex, tmp_path)
    own = make_memory(principal=globex.agent, current_content="Globex's own note.")
    link_create(principal=globex.agent, source_id=own.pk, target_id=imported.pk)

    with pytest.raises(CommandError, match=r"memory_link \d+, made after the import, names an imported target"):
        _undo(run)

    assert Memory.objects.filter(pk=imported.pk).exists()


def test_an_unknown_import_is_named(acme: Tenant) -> None:
    with pytest.raises(CommandError, match="no import 7b0c1a44-0000-4000-8000-000000000000"):
        call_command("undo_import", "7b0c1a44-0000-4000-8000-000000000000", "--reason", "x")
    with pytest.raises(CommandError, match="an import's id is a UUID"):
        call_command("undo_import", "not-an-id", "--reason", "x")
