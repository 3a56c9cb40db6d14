"""Retry policies for outgoing HTTP calls."""

import random
import time

DEFAULT_ATTEMPTS = 5


class RetryPolicy:
    """Exponential backoff with full jitter, capped."""

    def __init__(self, attempts: int = DEFAULT_ATTEMPTS, base: float = 0.1, cap: float = 10.0) -> None:
        self.attempts = attempts
        self.base = base
        self.cap = cap

    def delay(self, attempt: int) -> float:
        """Seconds to wait before the given attempt (1-based)."""
        ceiling = min(self.cap, self.base * 2 ** (attempt - 1))
        return random.uniform(0, ceiling)

    @property
    def exhausted(self) -> bool:
        return self.attempts <= 0


def call_with_retries(call, policy: RetryPolicy, retry_on=(TimeoutError, ConnectionError)):
    """Call `call()` until it succeeds or the policy gives up, sleeping between attempts."""
    for attempt in range(1, policy.attempts + 1):
        try:
            return call()
        except retry_on:
            if attempt == policy.attempts:
                raise
            time.sleep(policy.delay(attempt))
    return None
