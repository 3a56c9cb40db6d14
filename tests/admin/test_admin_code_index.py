"""Each repository's code index in the admin: its status, totals and runs, read-only, and only for
members of its organization (another organization's curator sees none of it, typed addresses
included)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from code_index import services
from code_index.models import CodeIndex, CodeIndexRun
from organizations.services import repository_get_or_create
from tests.code_index.conftest import python_module, sync_files
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db

ClientAs = Callable[..., Client]


@pytest.fixture
def acme_index(acme: Tenant) -> CodeIndex:
    repository_get_or_create(principal=acme.admin, slug="payments-api")
    sync_files(acme.agent, "payments-api", {"src/settle.py": python_module("settle_heron")})
    services.code_index_manifest(principal=acme.agent, repository="payments-api", manifest={})
    return CodeIndex.objects.get()


def test_a_member_sees_the_index_its_status_and_runs(client_as: ClientAs, acme: Tenant, acme_index: CodeIndex) -> None:
    client = client_as("reader-rita", acme.organization, "reader")

    listing = client.get(reverse("admin:code_index_codeindex_changelist"))
    page = client.get(reverse("admin:code_index_codeindex_change", args=[acme_index.pk]))
    runs = client.get(reverse("admin:code_index_codeindexrun_changelist") + f"?index__id__exact={acme_index.pk}")

    assert listing.status_code == 200 and "payments-api" in listing.text
    assert "indexing (waiting for a worker): 0 of 0 files" in listing.text  # the empty sync, queued
    assert page.status_code == 200
    assert "python" in page.text and "Every run of this index" in page.text
    assert page.text.count("<tr><td>") == 2  # the sync that indexed, the one queued
    assert runs.status_code == 200 and runs.text.count('class="field-trigger"') == 2
    assert "Save" not in page.text  # read-only
    assert client.get(reverse("admin:code_index_codeindex_add")).status_code == 403


def test_another_organization_sees_none_of_it(client_as: ClientAs, globex: Tenant, acme_index: CodeIndex) -> None:
    client = client_as("globex-curator", globex.organization, "curator")
    run = CodeIndexRun.objects.filter(index=acme_index).first()
    assert run is not None

    listing = client.get(reverse("admin:code_index_codeindex_changelist"))
    runs = client.get(reverse("admin:code_index_codeindexrun_changelist"))
    typed = client.get(reverse("admin:code_index_codeindex_change", args=[acme_index.pk]))
    typed_run = client.get(reverse("admin:code_index_codeindexrun_change", args=[run.pk]))

    assert listing.status_code == 200 and "payments-api" not in listing.text
    assert runs.status_code == 200 and "settle" not in runs.text and "payments-api" not in runs.text
    assert typed.status_code == 302 and typed_run.status_code == 302  # "does not exist" back to the list
