"""Requests per caller are limited (API_THROTTLE_RATE); over it, 429 with Retry-After.

The counters live in PostgreSQL (no Redis here), so each test's rolled-back transaction takes its
counts with it.
"""

from __future__ import annotations

from django.test import Client, override_settings

from organizations.models import User
from tests.conftest import Tenant
from tests.rest_api.conftest import API, Api, error_of


@override_settings(API_THROTTLE_RATE="2/min")
def test_over_the_rate_is_429_with_retry_after(api: Api) -> None:
    agent = api("agent")
    assert [agent.get(f"{API}/status/").status_code for _ in range(2)] == [200, 200]

    response = agent.get(f"{API}/status/")

    error = error_of(response, 429, "throttled")
    assert 1 <= int(response["Retry-After"]) <= 120  # the sliding window: up to two minutes away
    assert f"retry in {response['Retry-After']} s" in error["message"]


@override_settings(API_THROTTLE_RATE="2/min")
def test_each_token_has_its_own_allowance(api: Api) -> None:
    agent = api("agent")
    for _ in range(3):
        agent.get(f"{API}/status/")

    assert api("reader").get(f"{API}/status/").status_code == 200
    assert api("outsider").get(f"{API}/status/").status_code == 200


@override_settings(API_THROTTLE_RATE="2/min")
def test_a_session_is_limited_per_person(acme: Tenant) -> None:
    client = Client(HTTP_HOST="localhost")
    client.force_login(User.objects.get(username="acme-person"))
    assert [client.get(f"{API}/memories/").status_code for _ in range(2)] == [200, 200]

    response = client.get(f"{API}/memories/")

    error_of(response, 429, "throttled")
    assert int(response["Retry-After"]) >= 1


@override_settings(API_THROTTLE_RATE="")
def test_an_empty_rate_turns_the_limit_off(api: Api) -> None:
    agent = api("agent")
    assert {agent.get(f"{API}/status/").status_code for _ in range(5)} == {200}
