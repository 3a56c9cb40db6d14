"""`manage.py code_index REPOSITORY PATH`: the host's operator indexes any directory in-process,
with a progress bar and a summary; mistakes are errors that say what to do."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from code_index.models import CodeChunk, CodeIndex
from organizations.models import Organization, Repository
from tests.code_index.conftest import python_module, write_tree
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("code_index", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_indexes_any_directory_with_a_progress_bar(
    acme: Tenant, repository: Repository, tmp_path: Path, settings: object
) -> None:
    write_tree(tmp_path, {f"pkg/m{n}.py": python_module(f"m{n}") for n in range(3)})

    out, err = run("payments-api", str(tmp_path), "--organization", "acme")

    assert "Indexed payments-api from" in out and "3 files (3 added" in out and "3 chunks written" in out
    assert "Indexing" in err and "3/3" in err
    assert CodeIndex.objects.get().source == "path" and CodeChunk.objects.count() == 3
    again, _ = run("payments-api", str(tmp_path), "--organization", "acme")
    assert "0 added, 0 changed, 0 removed, 3 unchanged" in again


def test_the_only_organization_need_not_be_named(acme: Tenant, repository: Repository, tmp_path: Path) -> None:
    Organization.objects.exclude(pk=acme.organization.pk).delete()  # a platform of one organization
    write_tree(tmp_path, {"a.py": python_module("a")})

    out, _ = run("payments-api", str(tmp_path))

    assert "1 files (1 added" in out


def test_mistakes_are_errors_that_say_what_to_do(
    acme: Tenant, globex: Tenant, repository: Repository, tmp_path: Path
) -> None:
    with pytest.raises(CommandError, match="name the repository's organization with --organization"):
        run("payments-api", str(tmp_path))
    with pytest.raises(CommandError, match="known repositories: payments-api"):
        run("payment-api", str(tmp_path), "--organization", "acme")
    with pytest.raises(CommandError, match="is not a directory"):
        run("payments-api", str(tmp_path / "missing"), "--organization", "acme")
    with pytest.raises(CommandError, match="no organization 'initech'"):
        run("payments-api", str(tmp_path), "--organization", "initech")
