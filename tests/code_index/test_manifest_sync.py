"""A sync of an agent's own files in two steps: the manifest (path → sha256) is answered with the
paths the server needs; those files' contents follow in batches; once all have arrived the run
indexes them. Only changed files are asked for and embedded, and files the manifest leaves out are
removed. A bad batch is refused whole."""

from __future__ import annotations

from typing import Any

import pytest

from code_index import pipeline, services
from code_index.models import CodeChunk, CodeFile, CodeIndexRun, CodeUpload
from code_index.public import manifest_values, upload_values
from memories.embeddings import reset_provider
from memory_platform.exceptions import ValidationError
from organizations.models import Repository
from tests.code_index.conftest import CountingEmbedder, python_module, sha, sync_files
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db

FILES = {
    "src/billing.py": python_module("billing"),
    "src/refunds.py": python_module("refunds"),
    "src/tax.py": python_module("tax"),
}


def manifest_of(files: dict[str, str]) -> dict[str, str]:
    return {path: sha(text) for path, text in files.items()}


def test_the_first_sync_asks_for_every_file_and_indexes_them(
    acme: Tenant, repository: Repository, embedder: CountingEmbedder
) -> None:
    answer = services.code_index_manifest(principal=acme.agent, repository="payments-api", manifest=manifest_of(FILES))

    values = manifest_values(answer)
    assert (values["status"], values["phase"], values["needed"], values["unchanged"]) == (
        "indexing", "receiving", sorted(FILES), 0,
    )  # fmt: skip
    assert values["batch_limits"] == {"files": 200, "bytes": 600_000}

    first = services.code_index_upload(
        principal=acme.agent,
        repository="payments-api",
        files=[{"path": "src/billing.py", "content": FILES["src/billing.py"]}],
    )
    assert (first.received, first.remaining, first.run.phase) == (1, ["src/refunds.py", "src/tax.py"], "receiving")
    last = services.code_index_upload(
        principal=acme.agent,
        repository="payments-api",
        files=[{"path": path, "content": FILES[path]} for path in ("src/refunds.py", "src/tax.py")],
    )
    assert upload_values(last)["phase"] == "queued" and last.remaining == []

    run = pipeline.run_index(answer.run.pk)

    assert run is not None and (run.status, run.added, run.total_files) == ("completed", 3, 3)
    assert sorted(CodeChunk.objects.values_list("name", flat=True)) == ["billing", "refunds", "tax"]
    assert len(embedder.texts) == 3
    assert not CodeUpload.objects.exists()  # contents are dropped once indexed


def test_the_next_sync_asks_only_for_changed_files_and_removes_those_left_out(
    acme: Tenant, repository: Repository, embedder: CountingEmbedder
) -> None:
    sync_files(acme.agent, "payments-api", FILES)
    embedder.texts.clear()
    changed = {
        **FILES,
        "src/tax.py": python_module("tax", "return total * 21 // 100"),
        "src/fx.py": python_module("fx"),
    }
    del changed["src/refunds.py"]

    answer = services.code_index_manifest(
        principal=acme.agent, repository="payments-api", manifest=manifest_of(changed)
    )

    assert (answer.needed, answer.unchanged, answer.to_remove) == (["src/fx.py", "src/tax.py"], 1, 1)
    services.code_index_upload(
        principal=acme.agent,
        repository="payments-api",
        files=[{"path": p, "content": changed[p]} for p in answer.needed],
    )
    run = pipeline.run_index(answer.run.pk)

    assert run is not None and (run.added, run.modified, run.removed, run.unchanged) == (1, 1, 1, 1)
    assert len(embedder.texts) == 2  # the two files sent, nothing else
    assert sorted(CodeFile.objects.values_list("path", flat=True)) == ["src/billing.py", "src/fx.py", "src/tax.py"]
    assert not CodeChunk.objects.filter(path="src/refunds.py").exists()


def test_a_sync_with_nothing_changed_is_queued_at_once_and_embeds_nothing(
    acme: Tenant, repository: Repository, embedder: CountingEmbedder
) -> None:
    sync_files(acme.agent, "payments-api", FILES)
    embedder.texts.clear()

    answer = services.code_index_manifest(principal=acme.agent, repository="payments-api", manifest=manifest_of(FILES))

    assert (answer.needed, answer.run.phase) == ([], "queued")
    run = pipeline.run_index(answer.run.pk)
    assert run is not None and (run.status, run.unchanged, embedder.texts) == ("completed", 3, [])


def test_default_ignored_paths_are_not_asked_for(acme: Tenant, repository: Repository) -> None:
    files = {**FILES, "node_modules/x/index.js": "module.exports = 1;\n", "logo.png": "not really"}

    answer = services.code_index_manifest(principal=acme.agent, repository="payments-api", manifest=manifest_of(files))

    assert answer.needed == sorted(FILES)
    assert answer.ignored == ["logo.png", "node_modules/x/index.js"]


def test_done_ends_a_sync_without_the_files_not_sent(acme: Tenant, repository: Repository) -> None:
    answer = services.code_index_manifest(principal=acme.agent, repository="payments-api", manifest=manifest_of(FILES))
    services.code_index_upload(
        principal=acme.agent,
        repository="payments-api",
        files=[{"path": "src/tax.py", "content": FILES["src/tax.py"]}],
        done=True,
    )

    run = pipeline.run_index(answer.run.pk)

    assert run is not None and (run.status, run.skipped_files) == ("completed", 2)
    assert list(CodeFile.objects.values_list("path", flat=True)) == ["src/tax.py"]


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        ([{"path": "src/tax.py", "content": "tampered = True\n"}], "does not match its sha256"),
        ([{"path": "src/other.py", "content": "x = 1\n"}], "was not asked for"),
        ([{"path": "../etc/passwd", "content": "x"}], "must be relative"),
        ([{"path": "src/tax.py"}], 'exactly "path" and "content"'),
        ([], "non-empty list"),
        ("src/tax.py", "non-empty list"),
    ],
)
def test_a_bad_batch_is_refused_whole(acme: Tenant, repository: Repository, files: Any, problem: str) -> None:
    services.code_index_manifest(principal=acme.agent, repository="payments-api", manifest=manifest_of(FILES))
    good = {"path": "src/billing.py", "content": FILES["src/billing.py"]}
    batch = [good, *files] if isinstance(files, list) and files else files

    with pytest.raises(ValidationError) as caught:
        services.code_index_upload(principal=acme.agent, repository="payments-api", files=batch)

    assert problem in caught.value.message
    assert not CodeUpload.objects.exists()  # the good file of the batch was not kept either


def test_batches_over_the_limits_are_refused(acme: Tenant, repository: Repository, settings: Any) -> None:
    services.code_index_manifest(principal=acme.agent, repository="payments-api", manifest=manifest_of(FILES))
    every = [{"path": path, "content": text} for path, text in FILES.items()]
    settings.CODE_INDEX_UPLOAD_MAX_FILES = 2
    with pytest.raises(ValidationError, match="send at most 2 per call"):
        services.code_index_upload(principal=acme.agent, repository="payments-api", files=every)
    settings.CODE_INDEX_UPLOAD_MAX_FILES = 200
    settings.CODE_INDEX_UPLOAD_MAX_BYTES = 300
    with pytest.raises(ValidationError, match="send at most 300 per call"):
        services.code_index_upload(principal=acme.agent, repository="payments-api", files=every)


@pytest.mark.parametrize(
    ("manifest", "problem"),
    [
        (["src/a.py"], "must be an object"),
        ({"src/a.py": "abc"}, "64 hexadecimal"),
        ({"/etc/passwd": "0" * 64}, "must be relative"),
        ({"src/../x.py": "0" * 64}, "must be relative"),
    ],
)
def test_a_bad_manifest_is_refused(acme: Tenant, repository: Repository, manifest: Any, problem: str) -> None:
    with pytest.raises(ValidationError) as caught:
        services.code_index_manifest(principal=acme.agent, repository="payments-api", manifest=manifest)

    assert problem in caught.value.message
    assert not CodeIndexRun.objects.exists()


def test_files_without_a_manifest_first_are_refused(acme: Tenant, repository: Repository) -> None:
    with pytest.raises(ValidationError, match="send the manifest first"):
        services.code_index_upload(
            principal=acme.agent, repository="payments-api", files=[{"path": "a.py", "content": "x"}]
        )


def test_a_new_manifest_replaces_one_waiting_for_files_and_keeps_what_was_sent(
    acme: Tenant, repository: Repository
) -> None:
    first = services.code_index_manifest(principal=acme.agent, repository="payments-api", manifest=manifest_of(FILES))
    services.code_index_upload(
        principal=acme.agent, repository="payments-api", files=[{"path": "src/tax.py", "content": FILES["src/tax.py"]}]
    )

    second = services.code_index_manifest(principal=acme.agent, repository="payments-api", manifest=manifest_of(FILES))

    first.run.refresh_from_db()
    assert (first.run.status, first.run.error.startswith("replaced by a newer request")) == ("failed", True)
    assert second.run.status == "indexing"
    assert list(CodeUpload.objects.filter(run=second.run).values_list("path", flat=True)) == ["src/tax.py"]
    answer = services.code_index_upload(
        principal=acme.agent,
        repository="payments-api",
        files=[{"path": p, "content": FILES[p]} for p in ("src/billing.py", "src/refunds.py")],
    )
    assert answer.remaining == [] and answer.run.phase == "queued"


def test_after_a_model_change_every_file_is_asked_for_again(
    acme: Tenant, repository: Repository, embedder: CountingEmbedder
) -> None:
    sync_files(acme.agent, "payments-api", FILES)
    another = CountingEmbedder(embedder.inner)
    another.name = "another-model"
    reset_provider(another)

    run = sync_files(acme.agent, "payments-api", FILES)

    assert (run.modified, run.unchanged, len(another.texts)) == (3, 0, 3)
