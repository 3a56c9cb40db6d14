"""Any OpenAI-compatible ``/v1/embeddings`` endpoint: OpenAI, Ollama, vLLM, TEI, LiteLLM…

A circuit breaker stands in front of the endpoint: once a call fails (refused, timed out, an error
answer), calls fail at once for ``EMBEDDING_RETRY_SECONDS`` instead of each waiting the full
timeout, so writes store their memory as pending and hybrid search answers from keywords without
delay; then one call probes the endpoint (the others still fail fast) and closes the circuit if it
answers.
"""

from __future__ import annotations

import concurrent.futures
import json
import math
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence

from django.conf import settings

from memories.embeddings.base import EmbeddingError, EmbeddingProvider, ModelState

MAX_INPUTS_PER_REQUEST = 128


class OpenAICompatibleProvider(EmbeddingProvider):
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str,
        dimensions: int,
        timeout: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        if not base_url or not model:
            raise EmbeddingError("the openai embedding provider needs EMBEDDING_BASE_URL and EMBEDDING_MODEL")
        base = base_url.rstrip("/")
        self.url = (
            base
            if base.endswith("/embeddings")
            else (f"{base}/embeddings" if base.endswith("/v1") else f"{base}/v1/embeddings")
        )
        self.name = model
        self.dimensions = dimensions
        self._api_key = api_key
        self._timeout = timeout
        self._breaker = threading.Lock()
        self._clock = clock  # what the circuit's wait is measured by (tests pass their own)
        self._open_until = 0.0  # the clock's time before which calls fail at once
        self._last_failure = ""

    def embed_within(self, texts: Sequence[str], seconds: float) -> list[list[float]]:
        """The call runs in a thread of its own and the caller stops waiting after ``seconds``; the
        call goes on (bounded by the timeout), and a failure still opens the circuit."""
        self._pass_breaker(probe=False)  # fail at once while open, without taking the probe's turn
        call = _interactive.submit(self.embed, list(texts))
        try:
            return call.result(timeout=seconds)
        except concurrent.futures.TimeoutError:
            raise EmbeddingError(f"embedding endpoint {self.url} did not answer within {seconds:g} s") from None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self._pass_breaker()
        try:
            vectors: list[list[float]] = []
            for start in range(0, len(texts), MAX_INPUTS_PER_REQUEST):
                vectors.extend(self._request(list(texts[start : start + MAX_INPUTS_PER_REQUEST])))
        except EmbeddingError as error:
            with self._breaker:
                self._open_until = self._clock() + settings.EMBEDDING_RETRY_SECONDS
                self._last_failure = str(error)
            raise
        with self._breaker:
            self._open_until = 0.0
        return vectors

    def _pass_breaker(self, *, probe: bool = True) -> None:
        """Fail at once while the circuit is open; after it, let one caller through to probe."""
        with self._breaker:
            now = self._clock()
            if now < self._open_until:
                raise EmbeddingError(
                    f"the embedding endpoint failed recently ({self._last_failure}); "
                    f"it is tried again in {self._open_until - now:.0f} s"
                )
            if self._open_until and probe:
                # This caller probes; the others fail fast until it knows (at most one timeout).
                self._open_until = now + self._timeout

    def _request(self, texts: list[str]) -> list[list[float]]:
        body: dict[str, object] = {"model": self.name, "input": texts, "encoding_format": "float"}
        if self.dimensions:
            body["dimensions"] = self.dimensions
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers, method="POST")  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:  # noqa: S310 - configured URL
                payload = json.loads(response.read())
        except urllib.error.HTTPError as error:
            detail = error.read()[:300].decode(errors="replace")
            self._set_state(ModelState.ERROR, f"HTTP {error.code}")
            raise EmbeddingError(f"embedding endpoint {self.url} answered HTTP {error.code}: {detail}") from error
        except (urllib.error.URLError, TimeoutError, OSError, ValueError) as error:
            self._set_state(ModelState.ERROR, str(error))
            raise EmbeddingError(f"embedding endpoint {self.url} failed: {error}") from error
        try:
            rows = sorted(payload["data"], key=lambda row: row["index"])
            vectors = [[float(x) for x in row["embedding"]] for row in rows]
        except (KeyError, TypeError, ValueError) as error:
            self._set_state(ModelState.ERROR, "malformed response")
            raise EmbeddingError(f"embedding endpoint {self.url} returned an unexpected body") from error
        if len(vectors) != len(texts):
            raise EmbeddingError(f"embedding endpoint returned {len(vectors)} vectors for {len(texts)} texts")
        for vector in vectors:
            if len(vector) != self.dimensions:
                self._set_state(ModelState.ERROR, "dimension mismatch")
                raise EmbeddingError(
                    f"model {self.name} returned {len(vector)} dimensions; the platform stores {self.dimensions}. "
                    "Choose a model (or its 'dimensions' option) that yields that size."
                )
        self._set_state(ModelState.READY)
        return [_normalise(vector) for vector in vectors]


# Calls of writes and searches that gave up waiting may still run until the timeout: a few threads
# bound them; past that, calls queue and their callers give up waiting just the same.
_interactive = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="embedding-interactive")


def _normalise(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]
