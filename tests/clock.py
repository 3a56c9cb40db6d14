"""A clock a test sets and moves by hand, for code that takes its clock as a parameter (the rate
window's timer, the embedding endpoint's circuit breaker): time passes without waiting for it."""

from __future__ import annotations


class ManualClock:
    """Reads as ``now`` (seconds) until a test moves it with ``advance``."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
