"""`manage.py search_indexes` lists each large organization's own search indexes and the due ones,
and `--build` builds them as the worker's sweep (memories.tasks.memory_index_tenants) does."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command

from memories.batch import memory_batch_create
from memories.search import tenant_indexes
from memories.tasks import memory_index_tenants
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("search_indexes", *args, stdout=out)
    return out.getvalue()


def _fill(tenant: Tenant, count: int) -> None:
    entries = [
        {"scope_type": "organization", "memory_type": "fact", "current_content": f"Queue note {n}: step {n} waits."}
        for n in range(count)
    ]
    assert all(result.ok for result in memory_batch_create(principal=tenant.agent, entries=entries))


def test_the_command_lists_the_due_organizations_and_builds_them(acme: Tenant, settings: Any) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 5
    _fill(acme, 7)
    hnsw, text = tenant_indexes.index_names(acme.organization.pk)

    listed = _run()
    assert "0 organizations have their own indexes; 1 more are due (over 5 memories)" in listed
    assert "acme" in listed and "due: 7 memories" in listed

    built = _run("--build")
    assert f"built {hnsw}, {text} (organization {acme.organization.pk})" in built
    assert "1 organizations have their own indexes; 0 more are due" in built
    assert hnsw in built and text in built and "valid" in built
    assert "built with ef_construction 64, m 16" in built


def test_the_command_says_which_graphs_the_next_sweep_builds_again(acme: Tenant, settings: Any) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 5
    _fill(acme, 7)
    _run("--build")
    settings.SEARCH_HNSW_M = 12
    hnsw, _text = tenant_indexes.index_names(acme.organization.pk)

    assert "built with ef_construction 64, m 16 (the next sweep builds it again)" in _run()
    rebuilt = _run("--build")
    assert f"built {hnsw} (organization {acme.organization.pk})" in rebuilt
    assert "built with ef_construction 64, m 12" in rebuilt and "builds it again" not in rebuilt


def test_the_worker_sweeps_on_beat(acme: Tenant, settings: Any) -> None:
    settings.SEARCH_EXACT_SCAN_LIMIT = 5
    _fill(acme, 7)

    assert memory_index_tenants() == 1
    assert memory_index_tenants() == 0  # nothing left to build
    schedule = django_settings.CELERY_BEAT_SCHEDULE["memory-index-tenants"]
    assert schedule["task"] == "memories.tasks.memory_index_tenants"
