"""`manage.py serve` runs a real Celery worker with beat beside the web server, and stops it when
it stops, so no worker is left behind; `--no-worker`, RUN_WORKER=0 and `--prepare-only` start none."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command

from memory_platform.worker import BackgroundWorker
from tests.worker.conftest import process_gone, wait_for

WORKER_LINE = re.compile(r"Worker:\s+Celery worker \+ beat running \(pid (\d+)\)")


@dataclass
class ServeRun:
    """`manage.py serve` in a child process, with a data dir (and so a worker log) of its own."""

    how: str
    stop_signal: signal.Signals
    data_dir: Path
    process: subprocess.Popen[bytes]
    worker_pid: int = 0
    web_pids: tuple[int, ...] = ()

    @classmethod
    def start(cls, how: str, stop_signal: signal.Signals, data_dir: Path, env: dict[str, str]) -> ServeRun:
        data_dir.mkdir(parents=True)
        env = {**env, "MEMORY_PLATFORM_DATA_DIR": str(data_dir), "CELERY_BROKER_DIR": str(data_dir / "broker")}
        env.pop("RUN_WORKER", None)
        env["WEB_CONCURRENCY"] = str(WEB_PROCESSES)
        with (data_dir / "serve.out").open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "manage.py", "serve", "--no-demo", "--port", "0"],
                cwd=settings.BASE_DIR,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        return cls(how, stop_signal, data_dir, process)

    @property
    def output(self) -> str:
        return (self.data_dir / "serve.out").read_text()

    @property
    def log_file(self) -> Path:
        return self.data_dir / "worker.log"

    @property
    def log(self) -> str:
        return self.log_file.read_text() if self.log_file.exists() else ""

    def worker_started(self) -> bool:
        found = WORKER_LINE.search(self.output)
        if found:
            self.worker_pid = int(found[1])
        return found is not None

    def web_started(self) -> bool:
        """serve's children but the worker: its web processes (multiprocessing's tracker aside)."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()
        web = [int(pid) for pid in children if int(pid) != self.worker_pid and _is_web_worker(int(pid))]
        self.web_pids = tuple(web)
        return len(web) == WEB_PROCESSES

    def web_gone(self) -> bool:
        return all(process_gone(pid) for pid in self.web_pids)

    def worker_ready(self) -> bool:
        return "ready." in self.log

    def worker_gone(self) -> bool:
        return process_gone(self.worker_pid)

    def clean_up(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.worker_pid and not self.worker_gone():  # the test failed: leave no orphan behind
            os.killpg(self.worker_pid, signal.SIGKILL)
        for pid in self.web_pids:
            if not process_gone(pid):
                os.kill(pid, signal.SIGKILL)


WEB_PROCESSES = 2


def _is_web_worker(pid: int) -> bool:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return False
    return b"multiprocessing" in command and b"resource_tracker" not in command


STOPS = {"SIGTERM": signal.SIGTERM, "Ctrl-C": signal.SIGINT, "killed": signal.SIGKILL}


@pytest.mark.django_db(transaction=True)
def test_serve_starts_a_worker_and_it_does_not_outlive_serve(subprocess_env: dict[str, str], tmp_path: Path) -> None:
    # The ways serve can stop run side by side: a worker's warm shutdown alone takes seconds.
    runs = [ServeRun.start(how, sig, tmp_path / how, subprocess_env) for how, sig in STOPS.items()]
    try:
        for run in runs:
            wait_for(run.worker_started, 60, f"the serve banner ({run.how})")
            assert f"log: {run.log_file}" in run.output
            wait_for(run.worker_ready, 60, f"the worker to be ready ({run.how})")
            assert "beat: Starting" in run.log
            assert not run.worker_gone()
            wait_for(run.web_started, 60, f"{WEB_PROCESSES} web processes ({run.how})")
            assert f"Web:     {WEB_PROCESSES} processes" in run.output
            # "Ready" only once the web server answers and the worker and beat have reported.
            wait_for(lambda run=run: "Memory Platform is ready at http://" in run.output, 90, f"ready ({run.how})")

        for run in runs:
            run.process.send_signal(run.stop_signal)
        for run in runs:
            run.process.wait(timeout=40)
            # Killed outright, serve cannot stop the worker itself; the kernel tells the worker instead.
            wait_for(run.worker_gone, 30, f"the worker to stop ({run.how})")
            wait_for(run.web_gone, 30, f"the web processes {run.web_pids} to stop ({run.how})")
    finally:
        for run in runs:
            run.clean_up()

    for run in runs:
        assert "Warm shutdown" in run.log, f"{run.how}: the worker stopped gracefully, finishing its task"
        if run.stop_signal == signal.SIGKILL:
            assert run.process.returncode == -signal.SIGKILL
        else:
            assert "Stopping the worker" in run.output, run.output
            assert run.process.returncode == 0, run.output


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[str] = []


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch, settings: Any, tmp_path: Path, static_root: Path) -> _Recorder:
    """serve with the worker and the web server replaced by recorders (the real ones run above)."""
    settings.STATIC_ROOT = static_root
    recorder = _Recorder()
    monkeypatch.setattr(BackgroundWorker, "start", lambda self: recorder.calls.append("worker start"))
    monkeypatch.setattr(BackgroundWorker, "stop", lambda self, timeout=0: recorder.calls.append("worker stop"))
    monkeypatch.setattr("memory_platform.web.serve", lambda *args, **kwargs: recorder.calls.append("web server"))
    monkeypatch.delenv("RUN_WORKER", raising=False)
    # What serve sets in its environment for its children, undone after the test.
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "metrics"))
    monkeypatch.setenv("EMBEDDING_THREADS", os.environ.get("EMBEDDING_THREADS", ""))
    return recorder


def _serve(*args: str) -> str:
    out = io.StringIO()
    call_command("serve", "--no-demo", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_the_worker_runs_for_as_long_as_the_web_server(recorded: _Recorder) -> None:
    output = _serve()

    assert recorded.calls == ["worker start", "web server", "worker stop"]
    assert "Celery worker + beat running" in output
    assert f"log: {settings.DATA_DIR / 'worker.log'}" in output


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("how", ["--no-worker", "RUN_WORKER=0"])
def test_no_worker_when_it_runs_as_its_own_service(
    how: str, recorded: _Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    if how == "RUN_WORKER=0":
        monkeypatch.setenv("RUN_WORKER", "0")
        output = _serve()
    else:
        output = _serve(how)

    assert recorded.calls == ["web server"]
    assert "Worker:  not started here" in output


@pytest.mark.django_db(transaction=True)
def test_prepare_only_starts_no_worker(recorded: _Recorder) -> None:
    output = _serve("--prepare-only")

    assert recorded.calls == []
    assert "Worker:" not in output
