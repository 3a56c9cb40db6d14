from __future__ import annotations

import pytest

from memory_platform.exceptions import Conflict, ValidationError
from organizations.models import AuditEvent, Organization
from organizations.services import organization_create
from tests.conftest import Tenant


def test_creates_the_organization_named_after_its_slug_by_default(db: None) -> None:
    organization = organization_create(slug="initech")

    assert Organization.objects.get(slug="initech") == organization
    assert organization.name == "initech"
    event = AuditEvent.objects.get(action="organization.create", organization=organization)
    assert event.actor == "operator (manage.py)"


def test_a_display_name_may_be_given(db: None) -> None:
    assert organization_create(slug="initech", name="Initech Inc.").name == "Initech Inc."


def test_a_duplicate_slug_is_a_conflict(acme: Tenant) -> None:
    with pytest.raises(Conflict) as refused:
        organization_create(slug="acme", name="Another Acme")

    assert refused.value.message == "an organization with slug 'acme' already exists; choose another slug"
    assert Organization.objects.get(slug="acme").name == "Acme"


def test_the_database_is_usable_after_a_conflict(acme: Tenant) -> None:
    with pytest.raises(Conflict):
        organization_create(slug="acme")

    assert organization_create(slug="acme-two").slug == "acme-two"


@pytest.mark.parametrize("slug", ["", "Acme", "acme corp", "-acme", "acme-", "acme_corp", "a" * 65, "ácme"])
def test_a_bad_slug_is_refused_with_the_rule(db: None, slug: str) -> None:
    before = Organization.objects.count()
    with pytest.raises(ValidationError) as refused:
        organization_create(slug=slug)

    assert refused.value.message == (
        f"'{slug}' is not a valid organization slug: use 1-64 lowercase letters, digits and hyphens, "
        "starting and ending with a letter or digit"
    )
    assert Organization.objects.count() == before


@pytest.mark.parametrize("slug", ["a", "initech", "acme-2", "9lives", "a" * 64])
def test_good_slugs_are_accepted(db: None, slug: str) -> None:
    assert organization_create(slug=slug).slug == slug
