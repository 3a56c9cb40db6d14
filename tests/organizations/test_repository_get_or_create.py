from __future__ import annotations

import pytest

from memory_platform.exceptions import PermissionDenied, ValidationError
from organizations.models import AuditEvent, Repository
from organizations.services import repository_get_or_create
from tests.conftest import Tenant


def test_the_first_writer_creates_it_and_later_calls_return_the_same_row(acme: Tenant) -> None:
    first = repository_get_or_create(principal=acme.agent, slug="billing-service")
    second = repository_get_or_create(principal=acme.curator, slug="billing-service")

    assert first == second
    assert first.organization == acme.organization
    assert Repository.objects.filter(slug="billing-service").count() == 1
    assert AuditEvent.objects.filter(action="repository.create", target_id=str(first.pk)).count() == 1


def test_a_reader_cannot_create_a_repository(acme: Tenant) -> None:
    with pytest.raises(PermissionDenied) as refused:
        repository_get_or_create(principal=acme.reader, slug="billing-service")

    assert refused.value.message.startswith("creating a repository needs the agent role or higher")
    assert not Repository.objects.filter(slug="billing-service").exists()


def test_a_reader_may_name_an_existing_repository(acme: Tenant) -> None:
    existing = repository_get_or_create(principal=acme.agent, slug="billing-service")

    assert repository_get_or_create(principal=acme.reader, slug="billing-service") == existing


def test_the_same_slug_in_two_organizations_is_two_repositories(acme: Tenant, globex: Tenant) -> None:
    ours = repository_get_or_create(principal=acme.agent, slug="api")
    theirs = repository_get_or_create(principal=globex.agent, slug="api")

    assert ours != theirs
    assert ours.organization == acme.organization
    assert theirs.organization == globex.organization
    assert repository_get_or_create(principal=acme.agent, slug="api") == ours


@pytest.mark.parametrize("slug", ["API", "my repo", "repo/sub", "-repo"])
def test_a_bad_slug_is_refused(acme: Tenant, slug: str) -> None:
    with pytest.raises(ValidationError, match="is not a valid repository slug"):
        repository_get_or_create(principal=acme.agent, slug=slug)
