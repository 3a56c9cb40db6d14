"""The per-caller rate limit is a sliding window (two fixed windows weighted), counted in the cache."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.test import override_settings

from memory_platform.throttling import PrincipalRateThrottle
from tests.clock import ManualClock
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db


class _Caller:
    def __init__(self, principal: Any) -> None:
        self.auth = principal


def _throttle(clock: ManualClock) -> PrincipalRateThrottle:
    throttle = PrincipalRateThrottle()
    throttle.timer = clock  # type: ignore[method-assign]
    return throttle


@override_settings(API_THROTTLE_RATE="4/min")
def test_requests_just_before_a_window_ends_still_count_just_after(acme: Tenant) -> None:
    cache.clear()
    caller, clock = _Caller(acme.agent), ManualClock(60_000 * 60 + 59.0)  # one second before a minute ends
    assert all(_throttle(clock).allow_request(caller, None) for _ in range(4))

    clock.advance(2)  # one second into the next minute: the sliding minute still holds all four
    refused = _throttle(clock)

    assert not refused.allow_request(caller, None)
    assert 1 <= refused.wait() <= 120


@override_settings(API_THROTTLE_RATE="4/min")
def test_the_allowance_comes_back_as_the_window_slides(acme: Tenant) -> None:
    cache.clear()
    caller, clock = _Caller(acme.agent), ManualClock(60_000 * 60 + 10.0)
    assert all(_throttle(clock).allow_request(caller, None) for _ in range(4))
    refused = _throttle(clock)
    assert not refused.allow_request(caller, None)

    clock.advance(refused.wait() + 0.001)

    assert _throttle(clock).allow_request(caller, None)


@override_settings(API_THROTTLE_RATE="2/min")
def test_refused_requests_are_not_counted(acme: Tenant) -> None:
    cache.clear()
    caller, clock = _Caller(acme.agent), ManualClock(60_000 * 60 + 1.0)
    assert [_throttle(clock).allow_request(caller, None) for _ in range(10)] == [True, True] + [False] * 8

    clock.advance(60)  # the next minute, 1 s in: two requests of the last minute weigh 2 * 59/60

    assert [_throttle(clock).allow_request(caller, None) for _ in range(2)] == [False, False]
    clock.advance(30)
    assert [_throttle(clock).allow_request(caller, None) for _ in range(2)] == [True, False]
