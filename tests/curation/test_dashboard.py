"""The dashboard on the admin's index: an organization's memories in numbers and charts."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from curation import charts
from curation.selectors import dashboard
from memories.decisions import memory_delete, memory_lock, memory_verify
from memories.models import Memory
from organizations.models import Role, User
from organizations.selectors import principal_for_user
from tests.admin.conftest import StaffFactory
from tests.conftest import MemoryFactory, Tenant

Login = Callable[[User], Client]


@pytest.fixture
def seeded(acme: Tenant, globex: Tenant, make_memory: MemoryFactory) -> dict[str, Memory]:
    rule = make_memory(memory_type="business_rule", tags=["deploy", "ci"])
    memory_verify(principal=acme.curator, memory_id=rule.pk)
    locked = make_memory(memory_type="convention", tags=["deploy"])
    memory_lock(principal=acme.curator, memory_id=locked.pk)
    old = make_memory(tags=["billing"])
    three_days_ago = timezone.now() - timedelta(days=3)
    Memory.objects.filter(pk=old.pk).update(created_at=three_days_ago, updated_at=three_days_ago)
    carla = User.objects.create_user(username="carla-writer")
    carla.memberships.create(organization=acme.organization, role=Role.CURATOR)
    in_person = principal_for_user(user=carla, organization=acme.organization)
    by_person = make_memory(principal=in_person, current_content="Written by a person in the admin.")
    private = make_memory(principal=acme.person, scope_type="user", title="My own note", tags=["deploy"])
    memory_delete(principal=acme.agent, memory_id=make_memory(tags=["gone"]).pk)
    make_memory(principal=globex.agent, tags=["doomsday"])
    return {"rule": rule, "locked": locked, "old": old, "by_person": by_person, "private": private}


def test_the_numbers_of_one_organization(acme: Tenant, seeded: dict[str, Memory], make_staff: StaffFactory) -> None:
    carla = make_staff("carla", acme.organization, Role.CURATOR)

    numbers = dashboard(acme.organization, carla)

    assert numbers.total == 5  # the deleted one left out, the personal one counted
    assert dict(numbers.by_status) == {"Draft": 3, "Verified": 1, "Locked": 1}
    assert dict(numbers.by_type) == {"Business rule": 1, "Convention": 1, "Fact": 3}
    assert (numbers.days[-1], len(numbers.days)) == (timezone.localdate(), 30)
    # Today: through tokens the rule, the locked one, the personal note (a person's token) and the
    # deleted one (written is written); one by a person logged in. The old one three days ago.
    assert (numbers.written_by_agents[-1], numbers.written_by_people[-1]) == (4, 1)
    assert (numbers.written_by_agents[-4], numbers.written_by_people[-4]) == (1, 0)
    assert numbers.tags[0] == ("deploy", 3)
    assert "gone" not in dict(numbers.tags) and "doomsday" not in dict(numbers.tags)
    # Reviewed and personal ones left out; freshness computed now, before any decay run has stored one:
    # three days idle of a 30-day half-life is 2 ** (-3 / 30).
    (first, first_freshness), (second, second_freshness) = numbers.least_fresh
    assert (first.pk, second.pk) == (seeded["old"].pk, seeded["by_person"].pk)
    assert first_freshness == pytest.approx(2 ** (-3 / 30), abs=1e-3)
    assert second_freshness == pytest.approx(1.0, abs=1e-3)


def test_the_index_shows_the_dashboard_in_a_bounded_number_of_queries(
    acme: Tenant, seeded: dict[str, Memory], make_staff: StaffFactory, login: Login, django_assert_max_num_queries: Any
) -> None:
    client = login(make_staff("carla", acme.organization, Role.CURATOR))

    with django_assert_max_num_queries(25):
        response = client.get(reverse("admin:index"))

    page = response.content.decode()
    assert page.count('<svg class="chart"') == 4
    assert 'id="tile-review"' in page and "waiting for review" in page
    assert "doomsday" not in page and "My own note" not in page


def test_a_member_of_another_organization_sees_only_theirs(
    globex: Tenant, seeded: dict[str, Memory], make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("gary", globex.organization, Role.READER))

    response = client.get(reverse("admin:index"), {"organization": "acme"})

    numbers = response.context["dashboard"]
    assert (numbers.organization.slug, numbers.total) == ("globex", 1)
    assert "billing" not in response.content.decode()


def test_several_organizations_choose_which(
    acme: Tenant, globex: Tenant, seeded: dict[str, Memory], make_staff: StaffFactory, login: Login
) -> None:
    both = make_staff("bea", acme.organization, Role.READER)
    both.memberships.create(organization=globex.organization, role=Role.READER)
    client = login(both)

    assert client.get(reverse("admin:index")).context["dashboard"].organization.slug == "acme"
    assert client.get(reverse("admin:index"), {"organization": "globex"}).context["dashboard"].total == 1


def test_charts_are_well_formed_svg_and_escape_their_text() -> None:
    bars = charts.bar_chart("Most-used tags", [("<script>alert(1)</script>", 3), ("ops", 1)])
    columns = charts.stacked_columns(
        "Written",
        ["Nov 01", "Nov 02"],
        [charts.Series("agents", "agents", [1, 2]), charts.Series("people", "people", [0, 1])],
    )

    for svg in (str(bars), str(columns).split('<div class="chart-legend">')[0]):
        root = ET.fromstring(svg)  # noqa: S314 - our own output
        assert root.get("role") == "img" and root.get("aria-label")
    assert "<script>" not in str(bars) and "&lt;script&gt;" in str(bars)
    titles = [t.text for t in ET.fromstring(str(bars)).iter("{http://www.w3.org/2000/svg}title")]  # noqa: S314
    assert "ops: 1" in titles
    assert str(charts.bar_chart("Nothing", [])).startswith('<p class="chart-empty">')


def test_the_waiting_tile_counts_the_organization_shown(
    acme: Tenant, globex: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, login: Login
) -> None:
    make_memory()
    make_memory()
    make_memory(principal=globex.agent)
    both = make_staff("bea", acme.organization, Role.CURATOR)
    both.memberships.create(organization=globex.organization, role=Role.CURATOR)
    client = login(both)

    for slug, waiting in (("acme", 2), ("globex", 1)):
        response = client.get(reverse("admin:index"), {"organization": slug})
        assert response.context["organization_waiting"] == waiting
        assert response.context["review_waiting"] == 3  # the header's badge: every queue of theirs
        assert f'href="/admin/review/?organization={slug}" id="tile-review"' in response.content.decode()
