"""An HTTP embedding endpoint that hangs or fails never holds up writes and searches.

- Hanging (the call would wait out its 30 s timeout): a write waits at most
  EMBEDDING_WRITE_WAIT_SECONDS, then stores its memory pending; a hybrid search waits at most
  EMBEDDING_QUERY_WAIT_SECONDS, then answers from keywords, saying so. Once the endpoint answers,
  the pending memories are embedded in the background and new writes get their vector at once.
- Failing: one failure opens the circuit; calls then fail at once without reaching the endpoint,
  until the wait is over and one call probes it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.conf import settings
from django.test import override_settings

from memories.embedding_pipeline import embed_pending
from memories.embeddings import get_provider, reset_provider
from memories.embeddings.http import OpenAICompatibleProvider
from memories.models import EmbeddingStatus, Memory
from memories.search import SearchParams, memory_search
from tests.clock import ManualClock
from tests.conftest import MemoryFactory, Tenant

DIMENSIONS = 384


class Endpoint(ThreadingHTTPServer):
    """A local /v1/embeddings that hangs (until ``answer`` is set) or fails, as told."""

    daemon_threads = True
    failing = False
    calls = 0

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.answer = threading.Event()
        self.clock = ManualClock()  # the provider's circuit breaker waits by it


class Handler(BaseHTTPRequestHandler):
    server: Endpoint

    def do_POST(self) -> None:
        self.server.calls += 1
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.server.failing:
            self.send_error(500, "model crashed")
            return
        self.server.answer.wait(timeout=60)
        vector = [1.0] + [0.0] * (DIMENSIONS - 1)
        data = [{"index": i, "embedding": vector} for i, _ in enumerate(body["input"])]
        answer = json.dumps({"data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    server = Endpoint()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    configured = get_provider()
    reset_provider(
        OpenAICompatibleProvider(
            base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="remote-model", api_key="",
            dimensions=DIMENSIONS, timeout=settings.EMBEDDING_TIMEOUT, clock=server.clock,
        )
    )  # fmt: skip
    yield server
    server.answer.set()
    reset_provider(configured)
    server.shutdown()
    server.server_close()


def _timed_write(make_memory: MemoryFactory, text: str) -> tuple[Memory, float]:
    started = time.monotonic()
    memory = make_memory(current_content=text)
    return Memory.objects.get(pk=memory.pk), time.monotonic() - started


@pytest.mark.django_db
def test_a_hanging_endpoint_holds_up_no_write_and_no_search(
    acme: Tenant, make_memory: MemoryFactory, endpoint: Endpoint
) -> None:
    assert settings.EMBEDDING_TIMEOUT == 30  # the default: a write waiting it out would take 30 s
    # Each waits its own budget (0.5 s for a write, 1 s for a search), not the call's timeout: bounds
    # far under the timeout, so a busy machine does not fail what only the timeout would exceed.
    bound = settings.EMBEDDING_TIMEOUT / 4

    for n in range(3):
        memory, seconds = _timed_write(make_memory, f"Rule number {n}: deploys need two approvals.")
        assert memory.embedding_status == EmbeddingStatus.PENDING
        assert seconds < bound, seconds
    started = time.monotonic()
    page = memory_search(acme.reader, SearchParams(query="deploy approvals"))
    assert time.monotonic() - started < bound
    assert page.degraded is not None and "keyword results only" in page.degraded
    assert len(page.hits) == 3, "keyword search still finds them"

    endpoint.answer.set()  # the endpoint answers again
    assert embed_pending() == 3
    assert not Memory.objects.filter(embedding_status=EmbeddingStatus.PENDING).exists()
    recovered, _ = _timed_write(make_memory, "Refunds go through the ledger.")
    assert recovered.embedding_status == EmbeddingStatus.READY
    assert memory_search(acme.reader, SearchParams(query="ledger refunds")).degraded is None


@pytest.mark.django_db
@override_settings(EMBEDDING_RETRY_SECONDS=2)
def test_a_failing_endpoint_is_asked_once_then_probed_after_the_wait(
    acme: Tenant, make_memory: MemoryFactory, endpoint: Endpoint
) -> None:
    endpoint.failing = True
    endpoint.answer.set()
    first, _ = _timed_write(make_memory, "Deploys need two approvals.")
    assert first.embedding_status == EmbeddingStatus.PENDING

    for n in range(3):
        memory, _ = _timed_write(make_memory, f"Rule number {n} about deploys.")
        assert memory.embedding_status == EmbeddingStatus.PENDING
    page = memory_search(acme.reader, SearchParams(query="deploy approvals"))
    assert page.degraded is not None and "failed recently" in page.degraded
    assert endpoint.calls == 1, "nobody asked the endpoint again while the circuit was open"

    endpoint.failing = False
    endpoint.clock.advance(1.9)
    still_open, _ = _timed_write(make_memory, "Refunds are issued within a week.")
    assert still_open.embedding_status == EmbeddingStatus.PENDING and endpoint.calls == 1, "the wait is not over"
    endpoint.clock.advance(0.2)
    recovered, _ = _timed_write(make_memory, "Refunds go through the ledger.")
    assert recovered.embedding_status == EmbeddingStatus.READY
    assert endpoint.calls == 2
    assert memory_search(acme.reader, SearchParams(query="ledger refunds")).degraded is None
