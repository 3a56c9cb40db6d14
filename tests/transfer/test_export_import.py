"""An organization exported and imported: into an empty platform every row comes back as it was
(exported again, the file is the same but for what the import itself added); beside the original,
with new ids, every link follows its rows; a file that is cut short, altered or hostile changes
nothing and says which line is wrong."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from knowledge.mentions import rebuild
from knowledge.models import MemoryLink, Mention, Triple
from lifecycle.models import ConsolidationProposal
from memories.models import Memory, MemoryVersion
from memories.search import SearchParams, memory_search
from organizations.models import AuditEvent, Organization
from organizations.tokens import principal_for_token
from tests.conftest import Tenant
from tests.rest_api.conftest import World
from tests.transfer.conftest import export_lines as _export
from tests.transfer.conftest import write_lines as _write

pytestmark = pytest.mark.django_db


def test_into_an_empty_platform_every_row_comes_back_as_it_was(acme: Tenant, rich: World, tmp_path: Path) -> None:
    before = _export("acme")
    kinds = {line["kind"] for line in before}
    assert {"memory", "memory_version", "memory_link", "entity", "entity_alias", "triple", "repository",
            "consolidation_proposal", "code_index", "audit_event", "api_token", "user"} <= kinds  # fmt: skip
    exported = _write(before, tmp_path / "acme.jsonl")
    Organization.objects.filter(slug="acme").delete()  # the platform it goes to has none of it

    call_command("import_organization", str(exported), "--organization", "acme", "--create", stdout=io.StringIO())

    after = _export("acme")
    added = [line for line in after if line["kind"] == "audit_event"
             and line["fields"]["action"] in ("organization.create", "organization.import")]  # fmt: skip
    assert [line["fields"]["action"] for line in added] == ["organization.create", "organization.import"]
    after = [line for line in after if line not in added]
    after[-1]["counts"]["audit_event"] -= 2
    after[0]["counts"]["audit_event"] -= 2
    for line in (before[0], after[0]):
        line.pop("exported_at")  # the one timestamp of the export itself
    assert after == before
    assert principal_for_token(acme.raw_tokens["agent"]).organization.slug == "acme", "its tokens work again"


def test_beside_the_original_with_new_ids_every_link_follows_its_rows(
    acme: Tenant, rich: World, tmp_path: Path
) -> None:
    exported = _write(_export("acme", embeddings=False), tmp_path / "acme.jsonl")
    out = io.StringIO()

    call_command(
        "import_organization", str(exported), "--organization", "acme-copy", "--create", "--new-ids", stdout=out
    )

    copy = Organization.objects.get(slug="acme-copy")
    original = Organization.objects.get(slug="acme")
    # Mentions are not carried by the file: the import finds them again in the memories' text, with
    # every alias the file holds (the original's were found before some of its aliases were given).
    rebuild(original.pk)
    assert Mention.objects.filter(organization=copy).exists()
    for model in (Memory, MemoryLink, Triple, ConsolidationProposal, Mention):
        assert model.objects.filter(organization=copy).count() == model.objects.filter(organization=original).count()
    assert not set(Memory.objects.filter(organization=copy).values_list("pk", flat=True)) & set(
        Memory.objects.filter(organization=original).values_list("pk", flat=True)
    )
    for link in MemoryLink.objects.filter(organization=copy).select_related("source", "target"):
        assert link.source.organization_id == copy.pk and link.target.organization_id == copy.pk
    versions = MemoryVersion.objects.filter(memory__organization=copy)
    assert versions.count() == MemoryVersion.objects.filter(memory__organization=original).count()
    pending = Memory.objects.filter(organization=copy, embedding_status="pending").count()
    assert pending == Memory.objects.filter(organization=copy).count(), "vectors left out are computed again"
    assert f"{pending} memories to embed" in out.getvalue()


def _file_and_expect(lines: list[dict[str, Any]], path: Path, message: str) -> None:
    organizations, memories = Organization.objects.count(), Memory.objects.count()
    with pytest.raises(CommandError, match=message) as refused:
        call_command(
            "import_organization", str(_write(lines, path)), "--organization", "fresh", "--create", "--new-ids"
        )
    assert "nothing was imported" in str(refused.value)
    assert (Organization.objects.count(), Memory.objects.count()) == (organizations, memories)


def test_a_file_cut_short_or_altered_changes_nothing(acme: Tenant, rich: World, tmp_path: Path) -> None:
    lines = _export("acme", embeddings=False)
    memory = next(i for i, line in enumerate(lines) if line["kind"] == "memory")
    link = next(i for i, line in enumerate(lines) if line["kind"] == "memory_link")

    _file_and_expect(lines[:-1], tmp_path / "a", "cut short")
    _file_and_expect(lines[:link] + lines[link + 1 :], tmp_path / "b", "the end record counts")
    unknown = json.loads(json.dumps(lines))
    unknown[memory]["fields"]["evil"] = 1
    _file_and_expect(unknown, tmp_path / "c", f"line {memory + 1}: a memory has no field 'evil'")
    dangling = json.loads(json.dumps(lines))
    dangling[link]["fields"]["target_id"] = "00000000-0000-0000-0000-000000000000"
    _file_and_expect(dangling, tmp_path / "d", f"line {link + 1}: memory_link.target_id names memory")
    foreign = json.loads(json.dumps(lines))
    foreign[memory]["fields"]["organization_id"] = 999_999
    _file_and_expect(foreign, tmp_path / "e", "belongs to another organization")
    leaked = json.loads(json.dumps(lines))
    leaked[memory]["fields"]["current_content"] = "The deploy key is AKIAIOSFODNN7EXAMPLE, do not share."
    _file_and_expect(leaked, tmp_path / "g", f"line {memory + 1}: credentials are never stored")
    bad_value = json.loads(json.dumps(lines))
    bad_value[memory]["fields"]["created_at"] = "yesterday"
    _file_and_expect(bad_value, tmp_path / "f", r"memory.created_at: .*")


def test_hostile_files_are_refused_with_the_line(acme: Tenant, tmp_path: Path) -> None:
    manifest = _export("acme", embeddings=False)[0]
    cases = {
        "not JSON": b"{not json\n",
        "not an export": json.dumps({"kind": "memory"}).encode() + b"\n",
        "line 2: not JSON": json.dumps(manifest).encode() + b"\n" + b"[" * 10_000 + b"\n",
        "line 2: unknown kind 'shell'": json.dumps(manifest).encode() + b"\n" + b'{"kind": "shell", "fields": {}}\n',
        "the file is empty": b"",
    }
    for message, content in cases.items():
        path = tmp_path / "hostile.jsonl"
        path.write_bytes(content)
        with pytest.raises(CommandError, match=message):
            call_command("import_organization", str(path), "--organization", "fresh", "--create")
    assert not Organization.objects.filter(slug="fresh").exists()
    with pytest.raises(CommandError, match="exists; leave out --create"):
        path.write_bytes(json.dumps(manifest).encode() + b"\n")
        call_command("import_organization", str(path), "--organization", "acme", "--create")


def test_an_imported_memory_is_found_by_search(acme: Tenant, rich: World, tmp_path: Path) -> None:
    exported = _write(_export("acme"), tmp_path / "acme.jsonl")
    call_command("import_organization", str(exported), "--organization", "acme-copy", "--create", "--new-ids")
    copy = Organization.objects.get(slug="acme-copy")
    Memory.objects.filter(organization=copy).update(status="active")
    from organizations.principal import Principal

    page = memory_search(Principal.for_operator(copy), SearchParams(query="integer cents", mode="keyword"))

    assert page.hits and page.hits[0].memory.organization_id == copy.pk
    assert AuditEvent.objects.filter(organization=copy, action="organization.import").count() == 1
