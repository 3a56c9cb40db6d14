"""REST list and search follow validity windows, with valid_at and include_expired."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import quote

import pytest
from django.utils import timezone

from tests.conftest import MemoryFactory, Tenant
from tests.rest_api.conftest import API, Api, error_of

pytestmark = pytest.mark.django_db


def test_list_and_search_leave_out_expired_memories_unless_asked(
    api: Api, acme: Tenant, make_memory: MemoryFactory
) -> None:
    past = timezone.now() - timedelta(days=1)
    expired = make_memory(current_content="Refunds take 10 days.", valid_until=past.isoformat())
    current = make_memory(current_content="Refunds take 5 days.")
    reader = api("reader")
    last_week = quote((past - timedelta(days=6)).isoformat())

    listed = [m["id"] for m in reader.get(f"{API}/memories/").json()["results"]]
    then = [m["id"] for m in reader.get(f"{API}/memories/?valid_at={last_week}").json()["results"]]
    everything = [m["id"] for m in reader.get(f"{API}/memories/?include_expired=true").json()["results"]]
    searched = reader.post(f"{API}/memories/search/", {"query": "refunds", "filters": {"include_expired": True}})

    assert listed == [str(current.pk)]
    assert set(then) == set(everything) == {str(current.pk), str(expired.pk)}
    assert {m["id"] for m in searched.json()["results"]} == {str(current.pk), str(expired.pk)}
    error_of(reader.get(f"{API}/memories/?valid_at=soon"), 400)
    both = reader.post(
        f"{API}/memories/search/",
        {"query": "refunds", "filters": {"valid_at": past.isoformat(), "include_expired": True}},
    )
    assert "send one of them" in error_of(both, 422)["message"]
    outsider = api("outsider").get(f"{API}/memories/?include_expired=true").json()["results"]
    assert str(expired.pk) not in {m["id"] for m in outsider}
