"""docker-compose.yml's production topology, run without Docker (tests/platform/test_production_topology.py).

Each service of the compose file becomes processes on this machine, started with the command the
compose file gives it and the environment its `x-app` block sets:

- `db`: PostgreSQL with pgvector as a server of its own, reached over TCP with a password (the
  embedded PostgreSQL's binaries, in a data directory of the test's);
- `redis`: a redis-server of its own on a free port, appending to its file as the compose file asks;
- `migrate`, once, before anything else: on the schema this run's migrations make, restored into
  the new server first (tests/databases.py), so it finds nothing to apply, as on a redeploy;
- `web`: its replicas (`deploy.replicas`), each `manage.py serve` on a port of its own;
- `balancer`: Debian's nginx with `deploy/nginx.conf`, its upstream pointed at the replicas' ports
  (Docker's DNS does that in compose) and listening on a free port;
- `worker` (its replicas) and `beat`.

Every service shares one data directory, as the compose file's `appdata` volume. A service is a
process group, so that killing one kills what it started (a web replica's web processes, a worker's
pool), as a container's death would.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import redis
import yaml
from django.conf import settings

from memory_platform import embedded_db
from tests.databases import load_migrated_schema
from tests.live_server import free_port, manage, tail

COMPOSE_FILE = Path(settings.BASE_DIR) / "docker-compose.yml"
NGINX_SITE = Path(settings.BASE_DIR) / "deploy" / "nginx.conf"
START_TIMEOUT = 180.0
DATABASE_PASSWORD = "topology-secret"
METRICS_TOKEN = "topology-metrics"
# Where the compose file's images keep the application's data (the `appdata` volume).
APP_DATA = "/app/var"
_VARIABLE = re.compile(r"\$\{(\w+)(?::-([^}]*)|:\?[^}]*)?\}")


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next((path for path in ("/usr/sbin/nginx",) if os.access(path, os.X_OK)), None)


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE_FILE.read_text())
    return loaded


def with_defaults(value: object) -> str:
    """A compose value with its ``${NAME:-default}`` references replaced by their defaults."""
    return _VARIABLE.sub(lambda match: match.group(2) or "", str(value))


def replicas(service: dict[str, Any]) -> int:
    return int(with_defaults(service.get("deploy", {}).get("replicas", 1)))


@dataclass
class Service:
    """One process group: what a container of the compose file runs."""

    name: str
    command: list[str]
    env: dict[str, str]
    log: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                self.command, cwd=settings.BASE_DIR, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL to the whole group, as a container dies: nothing gets to clean up."""
        assert self.process is not None
        _signal_group(self.process, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is None:
            return
        _signal_group(self.process, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=20)
        _signal_group(self.process, signal.SIGKILL)  # what the group's leader left behind
        self.process.wait()

    def tail(self) -> str:
        return f"--- {self.name} ---\n{tail(self.log, 40)}" if self.log.exists() else f"--- {self.name}: no log ---"


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signum)


@dataclass
class Topology:
    root: Path
    services: dict[str, Service] = field(default_factory=dict)
    web_ports: list[int] = field(default_factory=list)
    balancer_port: int = 0
    database_port: int = 0
    redis_port: int = 0
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.balancer_port}"

    @property
    def database_url(self) -> str:
        return f"postgresql://memory:{DATABASE_PASSWORD}@127.0.0.1:{self.database_port}/memory_platform"

    @property
    def data_dir(self) -> Path:
        return self.root / "appdata"

    def app_env(self) -> dict[str, str]:
        """The compose file's `x-app` environment, its defaults taken, pointed at this machine's services."""
        env = {name: with_defaults(value) for name, value in compose()["x-app"]["environment"].items()}
        env.update(
            DATABASE_URL=self.database_url,
            REDIS_URL=f"redis://127.0.0.1:{self.redis_port}/0",
            SECRET_KEY="topology-" + "k" * 50,
            CSRF_TRUSTED_ORIGINS=self.base_url,
            # One web process per replica (the default is one per core): two cores run everything here.
            WEB_CONCURRENCY="1",
            METRICS_TOKEN=METRICS_TOKEN,
            PROMETHEUS_MULTIPROC_DIR=env["PROMETHEUS_MULTIPROC_DIR"].replace(APP_DATA, str(self.data_dir)),
        )
        return {
            "PATH": os.environ["PATH"],
            "HOME": os.environ.get("HOME", "/root"),
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
            "MEMORY_PLATFORM_DATA_DIR": str(self.data_dir),  # the image's /app/var
            # The workers' heartbeat, and a task a dead worker held delivered again, within the test.
            "HEARTBEAT_INTERVAL_SECONDS": "2",
            "CELERY_VISIBILITY_TIMEOUT_SECONDS": "15",
            # Beat's sweep hands a run whose worker died to another every 5 s, not every minute.
            "CODE_INDEX_WATCH_INTERVAL_SECONDS": "5",
            "CODE_INDEX_ROOTS": str(self.root / "code"),
            # The agents here write as fast as they can: the test is about losing writes, not rate limits.
            "API_THROTTLE_RATE": "",
            **env,
        }

    def command(self, service: str, *, port: int | None = None, name: str = "") -> list[str]:
        """The compose file's command for ``service``, run here."""
        words = [word.replace(APP_DATA, str(self.data_dir)) for word in compose()["services"][service]["command"]]
        program = {"python": [sys.executable], "celery": [sys.executable, "-m", "celery"]}[words[0]]
        command = [*program, *words[1:]]
        for option, value in (("--host", "127.0.0.1"), ("--port", str(port))):
            if option in command:
                command[command.index(option) + 1] = value
        if service == "worker":  # each container has a host name of its own
            command += ["--hostname", f"{name}@%h"]
        return command

    # --- starting ------------------------------------------------------------------------------

    def start(self) -> None:
        started = time.monotonic()
        (self.root / "code").mkdir(parents=True, exist_ok=True)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._start_database()
        self._start_redis()
        self.timings["database and redis"] = time.monotonic() - started
        # The schema as this run's migrations make it, restored; the compose file's migrate follows.
        load_migrated_schema(self.database_url, self.root)

        env = self.app_env()
        migrate = subprocess.run(
            self.command("migrate"), cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, check=False,
            timeout=START_TIMEOUT,
        )  # fmt: skip
        assert migrate.returncode == 0, f"migrate failed:\n{migrate.stdout}\n{migrate.stderr}"
        self.timings["migrate"] = time.monotonic() - started

        spec = compose()["services"]
        for number in range(1, replicas(spec["web"]) + 1):
            port = free_port()
            self.web_ports.append(port)
            self._add(f"web-{number}", self.command("web", port=port), env).start()
        for number in range(1, replicas(spec["worker"]) + 1):
            name = f"worker-{number}"
            self._add(name, self.command("worker", name=name), env).start()
        self._add("beat", self.command("beat"), env).start()
        for number, port in enumerate(self.web_ports, start=1):
            self.wait_healthy(f"web-{number}", f"http://127.0.0.1:{port}")
        self.timings["web replicas healthy"] = time.monotonic() - started

        self.balancer_port = free_port()
        self._add("balancer", self._nginx_command(), env).start()
        self.wait_healthy("balancer", self.base_url)
        for number in range(1, replicas(spec["worker"]) + 1):
            self.wait_for_log(f"worker-{number}", "ready.")
        self.timings["all up"] = time.monotonic() - started

    def _add(self, name: str, command: list[str], env: dict[str, str]) -> Service:
        service = Service(name, command, env, self.root / "logs" / f"{name}.log")
        service.log.parent.mkdir(parents=True, exist_ok=True)
        self.services[name] = service
        return service

    def _start_database(self) -> None:
        self.database_port = free_port()
        server = embedded_db.ensure_running(self.root / "db", tcp_port=self.database_port)
        with psycopg.connect(server.uri("postgres"), autocommit=True) as connection:
            connection.execute(f"CREATE ROLE memory LOGIN SUPERUSER PASSWORD '{DATABASE_PASSWORD}'")
            connection.execute("ALTER DATABASE memory_platform OWNER TO memory")
            # Over TCP only with the password, as the compose file's database asks.
            hba = server.pgdata / "pg_hba.conf"
            hba.write_text("local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n")
            connection.execute("SELECT pg_reload_conf()")

    def _start_redis(self) -> None:
        self.redis_port = free_port()
        directory = self.root / "redis"
        directory.mkdir()
        command = ["redis-server", "--bind", "127.0.0.1", "--port", str(self.redis_port), "--dir", str(directory),
                   "--save", "", "--appendonly", "yes"]  # fmt: skip
        self._add("redis", command, {"PATH": os.environ["PATH"]}).start()
        client = redis.Redis(port=self.redis_port)
        self.wait_until("redis", client.ping, "to answer PING")

    def _nginx_command(self) -> list[str]:
        """nginx with deploy/nginx.conf as its one site: the upstream is the replicas' ports and it
        listens on a free port; everything else as shipped."""
        directory = self.root / "nginx"
        temp = directory / "temp"
        temp.mkdir(parents=True)
        site = NGINX_SITE.read_text()
        upstream = "".join(f"    server 127.0.0.1:{port};\n" for port in self.web_ports)
        listen = f"listen 127.0.0.1:{self.balancer_port};"
        for shipped, here in (("    server web:8000;\n", upstream), ("listen 8000;", listen)):
            assert site.count(shipped) == 1, f"deploy/nginx.conf no longer has {shipped!r}: update tests/topology.py"
            site = site.replace(shipped, here)
        (directory / "site.conf").write_text(site)
        kinds = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        temps = "\n".join(f"    {kind}_temp_path {temp / kind};" for kind in kinds)
        (directory / "nginx.conf").write_text(
            f"daemon off;\nuser root;\nworker_processes 1;\npid {directory / 'nginx.pid'};\n"
            f"error_log {directory / 'error.log'} warn;\nevents {{ worker_connections 512; }}\n"
            f"http {{\n    access_log {directory / 'access.log'};\n{temps}\n"
            f"    include {directory / 'site.conf'};\n}}\n"
        )
        nginx = nginx_binary()
        assert nginx is not None
        return [nginx, "-e", str(directory / "error.log"), "-p", str(directory), "-c", str(directory / "nginx.conf")]

    # --- waiting -------------------------------------------------------------------------------

    def wait_until(self, name: str, check: Any, what: str, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        service = self.services.get(name)
        while True:
            if service is not None and not service.running():
                code = service.process.returncode if service.process else "?"
                raise RuntimeError(f"{name} exited with {code}:\n{service.tail()}")
            try:
                if check():
                    return
            except (httpx.TransportError, redis.exceptions.ConnectionError):
                pass
            if time.monotonic() > deadline:
                detail = service.tail() if service else ""
                raise RuntimeError(f"{name} did not {what} within {timeout:.0f} s\n{detail}")
            time.sleep(0.1)

    def wait_healthy(self, name: str, base_url: str) -> None:
        """The compose file's health check: /healthz answers 200."""
        self.wait_until(name, lambda: httpx.get(f"{base_url}/healthz", timeout=5).status_code == 200, "answer /healthz")

    def wait_for_log(self, name: str, text: str, timeout: float = START_TIMEOUT) -> None:
        log = self.services[name].log
        self.wait_until(name, lambda: text in log.read_text(errors="replace"), f"log {text!r}", timeout)

    # --- running commands in it, stopping it ---------------------------------------------------

    def manage(self, *args: str, **extra_env: str) -> str:
        """``python manage.py ARGS`` as `docker compose exec web ...` runs it; its standard output."""
        return manage({**self.app_env(), **extra_env}, *args, timeout=120)

    def logs(self) -> str:
        return "\n".join(service.tail() for service in self.services.values())

    def stop(self) -> None:
        for service in reversed(list(self.services.values())):
            service.stop()
        embedded_db.stop(self.root / "db")
