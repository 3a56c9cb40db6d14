"""When ``manage.py serve`` says "ready": once the web server answers /healthz, and (when serve runs
the worker) the worker and beat have said they are alive. Until then health says "starting"; the
line waits for what it announces, and says what did not come if it waited in vain."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

# How long the banner waits for the web server and the worker (the model loads, the worker starts).
READY_TIMEOUT_SECONDS = 120.0
POLL_SECONDS = 0.5


def _health(base: str) -> dict[str, Any] | None:
    url = base.replace("://0.0.0.0:", "://127.0.0.1:").replace("://[::]:", "://[::1]:") + "/healthz"
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - our own loopback URL
            body: dict[str, Any] = json.loads(response.read())
            return body
    except (urllib.error.URLError, OSError, ValueError):
        return None


def wait_until_ready(base: str, *, wait_for_worker: bool, timeout: float = READY_TIMEOUT_SECONDS) -> tuple[bool, str]:
    """(ready, what is missing): polls /healthz until it answers with the worker alive."""
    deadline = time.monotonic() + timeout
    health: dict[str, Any] | None = None
    while time.monotonic() < deadline:
        health = _health(base)
        if health is not None and (not wait_for_worker or health.get("worker", {}).get("ok")):
            return True, ""
        time.sleep(POLL_SECONDS)
    if health is None:
        return False, f"the web server did not answer {base}/healthz within {timeout:.0f} s"
    problem = health.get("worker", {}).get("problem", "it has not reported")
    return False, f"the worker is not ready ({problem}); see its log"


def announce(out: Any, base: str, *, wait_for_worker: bool) -> threading.Thread:
    """Say "ready" from a thread once the platform is (serve's own thread then serves)."""

    def run() -> None:
        ready, missing = wait_until_ready(base, wait_for_worker=wait_for_worker)
        said = (
            f"Memory Platform is ready at {base}/"
            if ready
            else f"Memory Platform is serving at {base}/, but {missing}."
        )
        out.write(f"\n{said}\n")
        out.flush()

    thread = threading.Thread(target=run, name="ready-banner", daemon=True)
    thread.start()
    return thread
