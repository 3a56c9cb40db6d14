"""`manage.py lifecycle_run`: the workers' passes on demand, with what they did."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from lifecycle.models import LifecycleRun
from memories.models import Memory
from tests.conftest import MemoryFactory, Tenant

pytestmark = pytest.mark.django_db


def test_a_full_pass_for_one_organization(acme: Tenant, globex: Tenant, make_memory: MemoryFactory) -> None:
    make_memory(current_content="Use ruff for linting.")
    make_memory(current_content="use ruff for linting!")
    out = StringIO()

    call_command("lifecycle_run", "consolidate", "decay", "--organization", "acme", "--full", stdout=out)

    assert "acme: consolidate completed" in out.getvalue() and "acme: decay completed" in out.getvalue()
    assert Memory.objects.filter(superseded_by__isnull=False).count() == 1
    assert not LifecycleRun.objects.filter(organization=globex.organization).exists()


def test_bad_arguments_say_what_to_use(acme: Tenant) -> None:
    with pytest.raises(CommandError, match="use any of consolidate, decay, expire"):
        call_command("lifecycle_run", "tidy")
    with pytest.raises(CommandError, match="no organization 'nope'"):
        call_command("lifecycle_run", "--organization", "nope")
