"""An HTTP embedding endpoint that hangs costs one timeout, not one per request: after a failure
writes return at once (their memory pending) and hybrid search answers from keywords, saying so;
once the endpoint answers again, the next call after the wait probes it and embedding resumes."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.test import override_settings

from memories.embeddings import get_provider, reset_provider
from memories.embeddings.http import OpenAICompatibleProvider
from memories.models import EmbeddingStatus, Memory
from memories.search import SearchParams, memory_search
from tests.conftest import MemoryFactory, Tenant

DIMENSIONS = 384


class Endpoint(ThreadingHTTPServer):
    """A local /v1/embeddings that hangs past the client's timeout until told to answer."""

    hang = True
    calls = 0


class Handler(BaseHTTPRequestHandler):
    server: Endpoint

    def do_POST(self) -> None:
        self.server.calls += 1
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.server.hang:
            time.sleep(3)
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
    server = Endpoint(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    configured = get_provider()
    reset_provider(
        OpenAICompatibleProvider(
            base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="hanging-model", api_key="",
            dimensions=DIMENSIONS, timeout=1,
        )
    )  # fmt: skip
    yield server
    reset_provider(configured)
    server.shutdown()
    server.server_close()


def _timed_write(make_memory: MemoryFactory, text: str) -> tuple[Memory, float]:
    started = time.monotonic()
    memory = make_memory(current_content=text)
    return Memory.objects.get(pk=memory.pk), time.monotonic() - started


@pytest.mark.django_db
@override_settings(EMBEDDING_RETRY_SECONDS=2)
def test_a_hanging_endpoint_costs_one_timeout_then_writes_and_search_go_on_at_once(
    acme: Tenant, make_memory: MemoryFactory, endpoint: Endpoint
) -> None:
    first, waited = _timed_write(make_memory, "Deploys need two approvals.")
    assert first.embedding_status == EmbeddingStatus.PENDING and waited >= 0.9

    for n in range(3):
        memory, seconds = _timed_write(make_memory, f"Rule number {n} about deploys.")
        assert memory.embedding_status == EmbeddingStatus.PENDING
        assert seconds < 0.5, seconds
    started = time.monotonic()
    page = memory_search(acme.reader, SearchParams(query="deploy approvals"))
    assert time.monotonic() - started < 0.5
    assert page.degraded is not None and "keyword results only" in page.degraded
    assert page.hits, "keyword search still finds them"
    assert endpoint.calls == 1, "nobody asked the endpoint again while the circuit was open"

    endpoint.hang = False
    time.sleep(2.1)
    recovered, _ = _timed_write(make_memory, "Refunds go through the ledger.")
    assert recovered.embedding_status == EmbeddingStatus.READY
    assert memory_search(acme.reader, SearchParams(query="ledger refunds")).degraded is None
