"""Which files a directory index reads: .gitignore files (nested, with negations), the default
ignore list (version control, dependencies, virtual environments, build output, secrets), binary
files, files over the size limit, and symlinks, which are never followed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from code_index.files import ignored_by_default, walk
from code_index.models import CodeChunk, CodeFile
from organizations.models import Repository
from tests.code_index.conftest import index_directory, python_module, write_tree
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db


def walked(root: Path) -> list[str]:
    return [found.path for found in walk(root)]


def test_gitignore_files_are_honoured_at_every_level(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            ".gitignore": "*.log\n/generated/\n!keep.log\n",
            "app.py": "x = 1\n",
            "debug.log": "noise\n",
            "keep.log": "kept on purpose\n",
            "generated/schema.py": "x = 2\n",
            "src/generated/types.py": "x = 3\n",  # /generated/ is anchored at the root
            "src/.gitignore": "secret_*.py\n",
            "src/secret_config.py": "x = 4\n",
            "src/config.py": "x = 5\n",
            "other/secret_config.py": "x = 6\n",  # src's rule applies under src only
        },
    )

    assert walked(tmp_path) == [
        ".gitignore",
        "app.py",
        "keep.log",
        "other/secret_config.py",
        "src/.gitignore",
        "src/config.py",
        "src/generated/types.py",
    ]


def test_the_default_list_leaves_out_dependencies_builds_caches_and_secrets(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "app.py": "x = 1\n",
            ".git/config": "[core]\n",
            "node_modules/left-pad/index.js": "module.exports = 1;\n",
            ".venv/lib/site.py": "x = 1\n",
            "venv/lib/site.py": "x = 1\n",
            "pkg/__pycache__/app.cpython-311.pyc": b"\x00\x01",
            "dist/bundle.js": "x\n",
            "build/out.js": "x\n",
            "web/static/app.min.js": "x\n",
            "package-lock.json": "{}\n",
            ".env": "SECRET=1\n",
            "deploy/server.pem": "-----BEGIN-----\n",
        },
    )

    assert walked(tmp_path) == ["app.py"]


def test_a_manifest_path_is_checked_against_the_default_list_too() -> None:
    assert ignored_by_default("node_modules/react/index.js")
    assert ignored_by_default("packages/web/node_modules/react/index.js")
    assert ignored_by_default("assets/logo.png")
    assert ignored_by_default(".env")
    assert not ignored_by_default("src/app.py")
    assert not ignored_by_default("docs/build-process.md")


def test_symlinks_are_never_followed(tmp_path: Path) -> None:
    outside = write_tree(tmp_path / "outside", {"passwords.txt": "hunter2\n", "lib/secret.py": "x = 1\n"})
    root = write_tree(tmp_path / "repo", {"app.py": "x = 1\n"})
    (root / "linked.txt").symlink_to(outside / "passwords.txt")
    (root / "linked-dir").symlink_to(outside / "lib", target_is_directory=True)
    os.mkfifo(root / "a-fifo")  # reading it would block the walk

    assert walked(root) == ["app.py"]


def test_binary_and_oversized_files_are_recorded_as_skipped_without_chunks(
    acme: Tenant, repository: Repository, roots: Path, settings: Any
) -> None:
    settings.CODE_INDEX_MAX_FILE_BYTES = 2000
    write_tree(
        roots,
        {
            "app.py": python_module("app"),
            "data.bin.py": b"\x00\x01\x02 not text",  # a NUL byte: binary, whatever the name says
            "big.py": "x = 1\n" * 1000,
            "logo.png": b"\x89PNG\r\n",  # a binary suffix: not even read
        },
    )

    run = index_directory(acme.agent, "payments-api", roots)

    files = {f.path: (f.skipped, f.chunk_count) for f in CodeFile.objects.all()}
    assert files == {"app.py": ("", 1), "data.bin.py": ("binary", 0), "big.py": ("too large", 0)}
    assert (run.status, run.total_files, run.skipped_files) == ("completed", 3, 2)
    assert set(CodeChunk.objects.values_list("path", flat=True)) == {"app.py"}
