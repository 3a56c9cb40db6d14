from __future__ import annotations

import pytest

from memory_platform.exceptions import PermissionDenied, ValidationError
from organizations.models import AuditEvent, Repository
from organizations.services import repositories_for_write, repository_get_or_create
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


def test_a_batch_of_writes_gets_its_repositories_in_one_call(acme: Tenant, globex: Tenant) -> None:
    existing = repository_get_or_create(principal=acme.agent, slug="web")
    theirs = repository_get_or_create(principal=globex.agent, slug="mobile")

    found, errors = repositories_for_write(
        principal=acme.agent,
        slugs={"web", "mobile", "api", "typo", "Bad Slug"},
        create={"mobile", "api", "Bad Slug"},
    )

    assert set(found) == {"web", "mobile", "api"}
    assert found["web"] == existing
    assert found["mobile"] != theirs and found["mobile"].organization == acme.organization
    assert set(errors) == {"typo", "Bad Slug"}
    assert "repository 'typo' does not exist in acme" in errors["typo"].message
    assert "known repositories: web" in errors["typo"].message  # as a single write is told
    assert "is not a valid repository slug" in errors["Bad Slug"].message
    assert not Repository.objects.filter(organization=acme.organization, slug__in=["typo", "Bad Slug"]).exists()
    # One audit event for each repository made, none for the one that was there.
    audited = AuditEvent.objects.filter(organization=acme.organization, action="repository.create")
    assert sorted(audited.values_list("data__slug", flat=True)) == ["api", "mobile", "web"]
    assert {e.target_id for e in audited} == {str(found[slug].pk) for slug in ("api", "mobile", "web")}
    assert {e.actor for e in audited if e.data["slug"] != "web"} == {acme.agent.label}

    again, _ = repositories_for_write(principal=acme.agent, slugs={"api"}, create={"api"})
    assert again == {"api": found["api"]}
    assert audited.count() == 3


def test_a_reader_gets_the_repositories_there_but_creates_none(acme: Tenant) -> None:
    existing = repository_get_or_create(principal=acme.agent, slug="web")

    found, errors = repositories_for_write(principal=acme.reader, slugs={"web", "api"}, create={"web", "api"})

    assert found == {"web": existing}
    assert isinstance(errors["api"], PermissionDenied)
    assert not Repository.objects.filter(slug="api").exists()
