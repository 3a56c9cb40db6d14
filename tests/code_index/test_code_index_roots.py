"""An agent never makes the server read arbitrary files: `path` indexing is off until the operator
lists roots in CODE_INDEX_ROOTS, and then only directories under them are accepted: not paths
outside, not `..`, not a symlink leading out, not another organization's root."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from code_index import services
from code_index.models import CodeIndex, CodeIndexRun
from memory_platform.exceptions import ValidationError
from organizations.models import AuditEvent, Repository
from tests.code_index.conftest import write_tree
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db


def refused(acme: Tenant, path: object) -> str:
    with pytest.raises(ValidationError) as caught:
        services.code_index_path(principal=acme.agent, repository="payments-api", path=path)
    assert not CodeIndex.objects.exists()
    assert not CodeIndexRun.objects.exists()
    assert not AuditEvent.objects.filter(action="code_index.start").exists()
    return caught.value.message


def test_with_no_roots_path_indexing_is_off(
    acme: Tenant, repository: Repository, tmp_path: Path, settings: Any
) -> None:
    settings.CODE_INDEX_ROOTS = []

    message = refused(acme, str(tmp_path))

    assert "turned off" in message and "manifest" in message


def test_a_directory_outside_the_roots_is_refused(acme: Tenant, repository: Repository, roots: Path) -> None:
    message = refused(acme, "/etc")

    assert "/etc is not under a directory this server indexes" in message
    assert str(roots) in message


def test_dot_dot_is_refused_even_when_it_would_land_inside(acme: Tenant, repository: Repository, roots: Path) -> None:
    (roots / "app").mkdir()

    assert "must not contain '..'" in refused(acme, f"{roots}/app/../app")
    assert "must not contain '..'" in refused(acme, f"{roots}/../../etc")


def test_a_symlink_out_of_the_root_is_refused(
    acme: Tenant, repository: Repository, roots: Path, tmp_path: Path
) -> None:
    outside = write_tree(tmp_path / "elsewhere", {"secret.py": "TOKEN = 'x'\n"})
    (roots / "looks-inside").symlink_to(outside, target_is_directory=True)

    message = refused(acme, str(roots / "looks-inside"))

    assert "symlinks are resolved" in message


def test_relative_missing_and_non_directory_paths_are_refused(
    acme: Tenant, repository: Repository, roots: Path
) -> None:
    write_tree(roots, {"file.py": "x = 1\n"})

    assert "must be absolute" in refused(acme, "srv/code")
    assert "not a directory" in refused(acme, str(roots / "missing"))
    assert "not a directory" in refused(acme, str(roots / "file.py"))
    assert "absolute path" in refused(acme, "")
    assert "absolute path" in refused(acme, 42)


def test_a_root_for_another_organization_is_not_one_for_this_one(
    acme: Tenant, repository: Repository, tmp_path: Path, settings: Any
) -> None:
    globex_root = tmp_path / "globex"
    acme_root = tmp_path / "acme"
    globex_root.mkdir()
    acme_root.mkdir()
    settings.CODE_INDEX_ROOTS = [f"globex={globex_root}", f"acme={acme_root}"]

    message = refused(acme, str(globex_root))

    assert f"indexes for you ({acme_root})" in message  # globex's root is not offered
    run = services.code_index_path(principal=acme.agent, repository="payments-api", path=str(acme_root))
    assert run.root_path == str(acme_root)


def test_a_directory_under_a_root_is_accepted(acme: Tenant, repository: Repository, roots: Path) -> None:
    (roots / "payments").mkdir()

    run = services.code_index_path(principal=acme.agent, repository="payments-api", path=f"{roots}/payments/")

    assert (run.status, run.phase, run.root_path) == ("indexing", "queued", str(roots / "payments"))
    event = AuditEvent.objects.get(action="code_index.start")
    assert event.data["path"] == str(roots / "payments")
