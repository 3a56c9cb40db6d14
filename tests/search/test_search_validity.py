"""Default reads show memories valid now; valid_at shows another moment; include_expired shows all."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories import selectors
from memories.models import Memory
from memories.recall import recall_bundle_build
from memory_platform.exceptions import ValidationError
from tests.conftest import MemoryFactory, Tenant
from tests.search.conftest import hit_ids, page_through, search

pytestmark = pytest.mark.django_db


@pytest.fixture
def timeline(make_memory: MemoryFactory) -> dict[str, Memory]:
    """The support hours as they were, are, and will be."""
    now = timezone.now()
    return {
        "expired": make_memory(
            current_content="The support hotline closes at 17:00 on weekdays.",
            valid_from=(now - timedelta(days=30)).isoformat(),
            valid_until=(now - timedelta(days=1)).isoformat(),
        ),
        "current": make_memory(
            current_content="The support hotline closes at 19:00 on weekdays.",
            valid_from=(now - timedelta(days=1)).isoformat(),
        ),
        "future": make_memory(
            current_content="The support hotline closes at 21:00 on weekdays.",
            valid_from=(now + timedelta(days=10)).isoformat(),
        ),
        "timeless": make_memory(current_content="The support hotline number is on the status page."),
    }


def ids(timeline: dict[str, Memory], *names: str) -> set[object]:
    return {timeline[name].pk for name in names}


def test_search_and_list_show_what_is_valid_now(acme: Tenant, timeline: dict[str, Memory]) -> None:
    found = set(hit_ids(search(acme.agent, query="when does the support hotline close")))
    listed = {m.pk for m in selectors.memory_list(acme.agent)}

    assert found == ids(timeline, "current", "timeless")
    assert listed == ids(timeline, "current", "timeless")


def test_valid_at_shows_another_moment(acme: Tenant, timeline: dict[str, Memory]) -> None:
    last_week = (timezone.now() - timedelta(days=7)).isoformat()
    next_month = timezone.now() + timedelta(days=30)

    then = set(hit_ids(search(acme.agent, query="support hotline", filters={"valid_at": last_week})))
    later = selectors.memory_list(acme.agent, selectors.MemoryFilters(valid_at=next_month))

    assert then == ids(timeline, "expired", "timeless")
    assert {m.pk for m in later} == ids(timeline, "current", "future", "timeless")


def test_include_expired_shows_everything(acme: Tenant, timeline: dict[str, Memory]) -> None:
    pages = page_through(acme.agent, query="support hotline", filters={"include_expired": True}, limit=2)

    assert {pk for page in pages for pk in hit_ids(page)} == set(ids(timeline, *timeline))


def test_recall_and_the_index_leave_out_what_is_not_valid_now(acme: Tenant, timeline: dict[str, Memory]) -> None:
    bundle = recall_bundle_build(acme.agent, [], "support hotline hours", 4000)
    index = {m.pk for m in selectors.memory_index(acme.agent, limit=50)}

    assert "19:00" in bundle and "17:00" not in bundle and "21:00" not in bundle
    assert index == ids(timeline, "current", "timeless")


def test_bad_validity_arguments_say_what_to_send(acme: Tenant) -> None:
    with pytest.raises(ValidationError, match="valid_at must be an ISO 8601 date-time"):
        search(acme.agent, query="x", filters={"valid_at": "last tuesday"})
    with pytest.raises(ValidationError, match="send one of them"):
        search(acme.agent, query="x", filters={"valid_at": timezone.now().isoformat(), "include_expired": True})
    with pytest.raises(ValidationError, match="include_expired must be true or false"):
        search(acme.agent, query="x", filters={"include_expired": "yes"})


def test_a_cursor_of_one_moment_is_refused_for_another(acme: Tenant, timeline: dict[str, Memory]) -> None:
    first = search(acme.agent, query="support hotline", filters={"include_expired": True}, limit=1)

    assert first.next_cursor is not None
    with pytest.raises(ValidationError, match="cursor"):
        search(acme.agent, query="support hotline", limit=1, cursor=first.next_cursor)


def test_an_outsider_sees_none_of_it_at_any_moment(globex: Tenant, timeline: dict[str, Memory]) -> None:
    assert hit_ids(search(globex.agent, query="support hotline", filters={"include_expired": True})) == []
    assert list(selectors.memory_list(globex.agent, selectors.MemoryFilters(include_expired=True))) == []
