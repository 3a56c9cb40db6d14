"""An import is stored a chunk per transaction, each chunk recorded with where its rows went: one cut
off (the process dies) goes on from its last stored chunk when the same file is imported again, and
ends as if it had never stopped. A file the check passes but the database refuses half-way leaves
nothing behind; two imports into one organization never run at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from knowledge.models import MemoryLink
from lifecycle.models import ConsolidationProposal
from memories.models import Memory, MemoryVersion
from memory_platform.exceptions import Conflict
from organizations.models import Organization, User
from tests.conftest import Tenant, other_session
from tests.rest_api.conftest import World
from tests.transfer.conftest import export_lines, write_lines
from transfer import records, state
from transfer.importer import LOCK_NAMESPACE, import_organization
from transfer.lines import ImportProblem
from transfer.models import ImportedId, ImportRun

pytestmark = pytest.mark.django_db


class Crash(BaseException):
    """Stands for the process dying: nothing of the import's own handling runs."""


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state, "BATCH", 3)


def _import(path: Path, slug: str, *, die_after: int | None = None, **options: Any) -> Any:
    seen = 0

    def progress(kind: str, n: int) -> None:
        nonlocal seen
        seen += n
        if die_after is not None and seen >= die_after:
            raise Crash

    with path.open("rb") as source:
        return import_organization(source, slug=slug, progress=progress, **options)


def _contents(slug: str) -> list[str]:
    return sorted(Memory.objects.filter(organization__slug=slug).values_list("current_content", flat=True))


def test_an_import_cut_off_goes_on_from_its_last_stored_chunk(acme: Tenant, rich: World, tmp_path: Path) -> None:
    lines = export_lines("acme")
    exported = lines[-1]["counts"]
    path = write_lines(lines, tmp_path / "acme.jsonl")

    rows = [line["kind"] for line in lines if line["kind"] in records.BY_NAME]
    with pytest.raises(Crash):  # at the fifth memory: one chunk of three stored, the next under way
        _import(path, "copy", create=True, new_ids=True, die_after=rows.index("memory") + 5)
    [cut] = ImportRun.objects.filter(organization__slug="copy")
    stored = Memory.objects.filter(organization__slug="copy").count()
    assert cut.status == "running" and cut.line > 0
    assert 0 < stored < Memory.objects.filter(organization__slug="acme").count(), "cut off half-way"

    result = _import(path, "copy", create=True, new_ids=True)  # the same command again

    assert result.resumed_from == cut.line and result.run.pk == cut.pk and result.run.status == "completed"
    assert {kind: n for kind, n in result.counts.items() if n} == {k: n for k, n in exported.items() if n}
    assert _contents("copy") == _contents("acme"), "every memory once, none twice"
    copy = Organization.objects.get(slug="copy")
    assert (
        MemoryVersion.objects.filter(memory__organization=copy).count()
        == MemoryVersion.objects.filter(memory__organization__slug="acme").count()
    )
    assert (
        MemoryLink.objects.filter(organization=copy).count()
        == MemoryLink.objects.filter(organization__slug="acme").count()
    )
    proposal = ConsolidationProposal.objects.filter(organization=copy).first()
    assert proposal is not None and all(m.organization_id == copy.pk for m in proposal.memories.all())
    assert ImportedId.objects.filter(run=cut, model="memories.Memory").count() == result.counts["memory"]


def test_a_file_the_database_refuses_half_way_leaves_nothing(
    acme: Tenant, globex: Tenant, rich: World, tmp_path: Path
) -> None:
    lines = export_lines("acme")
    late = max(i for i, line in enumerate(lines) if line["kind"] == "memory_version")
    lines[late]["fields"]["version"] = 2**40  # passes the check; PostgreSQL's integer refuses it
    path = write_lines(lines, tmp_path / "acme.jsonl")
    memories, people = Memory.objects.count(), User.objects.count()

    with pytest.raises(ImportProblem, match=r"line \d+: the memory_version records from here on cannot be stored"):
        _import(path, "globex", new_ids=True)

    assert (Memory.objects.count(), User.objects.count()) == (memories, people)
    assert not ImportRun.objects.exists()
    with pytest.raises(ImportProblem):
        _import(path, "fresh", create=True, new_ids=True)
    assert not Organization.objects.filter(slug="fresh").exists()


def test_a_second_file_with_one_id_twice_is_refused_before_anything_is_written(
    acme: Tenant, rich: World, tmp_path: Path
) -> None:
    lines = export_lines("acme")
    memories = [i for i, line in enumerate(lines) if line["kind"] == "memory"]
    lines[memories[-1]]["fields"]["id"] = lines[memories[0]]["fields"]["id"]
    path = write_lines(lines, tmp_path / "acme.jsonl")

    with pytest.raises(ImportProblem, match=r"line \d+: a second memory with id"):
        _import(path, "copy", create=True, new_ids=True)

    assert not Organization.objects.filter(slug="copy").exists()


def test_two_imports_into_one_organization_never_run_at_once(acme: Tenant, rich: World, tmp_path: Path) -> None:
    path = write_lines(export_lines("acme"), tmp_path / "acme.jsonl")
    globex = Organization.objects.get(slug="globex")
    with other_session() as other:
        other.execute("SELECT pg_advisory_lock(%s, %s)", [LOCK_NAMESPACE, globex.pk])
        with pytest.raises(Conflict, match="being imported into right now"):
            _import(path, "globex", new_ids=True)
        other.execute("SELECT pg_advisory_unlock(%s, %s)", [LOCK_NAMESPACE, globex.pk])

    assert _import(path, "globex", new_ids=True).run.status == "completed"  # once the other one is done
