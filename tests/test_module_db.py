"""The harness's module_db (tests/conftest.py): rows a module-scoped fixture builds are there for
each of the module's tests, and what one test changes in them is undone before the next."""

from __future__ import annotations

from typing import Any

import pytest

from memories.embeddings import reset_provider
from memories.models import Memory
from tests.conftest import HASH_EMBEDDER, load_tenant, memory_factory

CONTENT = "Shared by every test of this module."


@pytest.fixture(scope="module")
def shared_memory(module_db: None) -> str:
    reset_provider(HASH_EMBEDDER)
    return str(memory_factory(load_tenant("acme"))(current_content=CONTENT).pk)


def test_a_test_sees_the_shared_row_and_changes_it(shared_memory: str, db: Any) -> None:
    assert Memory.objects.get(pk=shared_memory).current_content == CONTENT
    Memory.objects.filter(pk=shared_memory).update(current_content="Changed by the first test.")
    Memory.objects.exclude(pk=shared_memory).delete()
    assert Memory.objects.get(pk=shared_memory).current_content == "Changed by the first test."


def test_the_next_test_finds_it_as_built(shared_memory: str, db: Any) -> None:
    assert Memory.objects.get(pk=shared_memory).current_content == CONTENT


def test_a_test_without_the_fixture_runs_in_the_modules_transaction_too(db: Any) -> None:
    assert Memory.objects.filter(current_content=CONTENT).count() == 1
