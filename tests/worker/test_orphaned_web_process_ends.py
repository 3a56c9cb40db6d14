"""A web process whose server was killed outright ends, even when its graceful stop hangs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from django.conf import settings

from tests.worker.conftest import process_gone

pytestmark = pytest.mark.processes

# A "server" that starts one web process the way granian does (multiprocessing), which ignores the
# SIGTERM its server's death brings (a graceful stop that never finishes) and would sleep forever.
SERVER = textwrap.dedent(
    """
    import multiprocessing, os, signal, sys, time
    sys.path.insert(0, sys.argv[1])

    def web_process():
        from memory_platform import worker
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        worker.die_with_server()
        print(os.getpid(), flush=True)
        while True:
            time.sleep(1)

    if __name__ == "__main__":
        multiprocessing.set_start_method("spawn")
        multiprocessing.Process(target=web_process).start()
        while True:
            time.sleep(1)
    """
)


def test_a_web_process_ends_with_its_killed_server_even_if_it_would_not_stop(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memory_platform.settings"}
    server = subprocess.Popen(
        [sys.executable, str(script), str(settings.BASE_DIR)], stdout=subprocess.PIPE, text=True, env=env
    )
    web_pid = 0
    try:
        assert server.stdout is not None
        web_pid = int(server.stdout.readline())
        assert not process_gone(web_pid)

        server.send_signal(signal.SIGKILL)
        server.wait()
        deadline = time.monotonic() + 30
        while not process_gone(web_pid):
            assert time.monotonic() < deadline, f"web process {web_pid} still runs 30 s after its server died"
            time.sleep(0.2)
    finally:
        if server.poll() is None:
            server.kill()
        if web_pid and not process_gone(web_pid):  # the test failed: leave no orphan behind
            os.kill(web_pid, signal.SIGKILL)
