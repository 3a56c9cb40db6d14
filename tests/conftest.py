"""Shared fixtures: two organizations with a person or token for every role, and the embedder.

``acme`` is the organization under test; ``globex`` is the outsider whose principals must see
and touch nothing of acme's. Both are built once per test process (per xdist worker) and
committed, so each test's rolled-back transaction returns to them; a ``transaction=True`` test
empties every table when it ends, after which they are built again (see pytest_runtest_teardown).
Every test that uses the database finds them, whether it asks for them or not. Their principals
come from their tokens' real authentication for every test, as a request's would.

Every test embeds with ``tests.embedder.HashEmbedder`` unless it is marked ``real_embedder`` (all
of tests/search and tests/worker are): only retrieval and the model itself need the real model.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test import override_settings
from pytest_django.plugin import blocking_manager_key

from memories.embeddings import EmbeddingProvider, get_provider, reset_provider
from memories.models import Memory
from memories.search import tenant_indexes
from memories.services import memory_create
from organizations.models import Membership, Organization, Role, User
from organizations.principal import Principal
from organizations.selectors import principal_for_user
from organizations.tokens import principal_for_token, token_create
from tests.connections import connect
from tests.embedder import HashEmbedder

# The live server (granian, as `manage.py serve` runs it) and its environment, for every directory that
# needs one; the test databases copied from a migrated template (pytest-django's django_db_setup).
pytest_plugins = ["tests.live_server", "tests.tenancy_guard", "tests.databases"]

FAST_PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
PERSONA_SLUGS = ("acme", "globex")
# Directories whose every test is about retrieval or the embedding model: they get the real one.
REAL_EMBEDDER_DIRECTORIES = ("search", "worker", "lifecycle", "trust")  # duplicate detection is retrieval too


class Tenant:
    """A persona organization and its raw tokens; each principal is given by its token's real
    authentication (as a request's is) the first time a test asks for it."""

    def __init__(self, slug: str, raw_tokens: dict[str, str]) -> None:
        self.slug = slug
        self.raw_tokens = raw_tokens

    @cached_property
    def organization(self) -> Organization:
        return Organization.objects.get(slug=self.slug)

    @cached_property
    def admin(self) -> Principal:
        return principal_for_token(self.raw_tokens[Role.ADMIN])

    @cached_property
    def curator(self) -> Principal:
        return principal_for_token(self.raw_tokens[Role.CURATOR])

    @cached_property
    def agent(self) -> Principal:
        return principal_for_token(self.raw_tokens[Role.AGENT])

    @cached_property
    def reader(self) -> Principal:
        return principal_for_token(self.raw_tokens[Role.READER])

    @cached_property
    def person(self) -> Principal:
        """A person's own token: needed for user-scope memories."""
        return principal_for_token(self.raw_tokens["person"])


def _tenant(slug: str) -> dict[str, str]:
    """Persona ``slug``: its organization, a token per role and a person's own token; the raw tokens."""
    organization = Organization.objects.create(slug=slug, name=slug.title())
    operator = Principal.for_operator(organization, "tests")
    raw = {role: token_create(principal=operator, role=role, name=f"{slug}-{role}").raw for role in Role.values}
    person_user = User.objects.create_user(username=f"{slug}-person", password="unused-password-1")
    Membership.objects.create(user=person_user, organization=organization, role=Role.AGENT)
    raw["person"] = token_create(principal=operator, role=Role.AGENT, name=f"{slug}-person", user=person_user).raw
    return raw


# The personas' tokens, by slug, as committed in this process's test database.
_personas_built: dict[str, dict[str, str]] = {}


def _build_personas() -> None:
    # Built outside any test: the production password hasher would cost ~0.2 s per user.
    with override_settings(PASSWORD_HASHERS=FAST_PASSWORD_HASHERS):
        for slug in PERSONA_SLUGS:
            _personas_built[slug] = _tenant(slug)


def load_tenant(slug: str) -> Tenant:
    """The committed persona."""
    return Tenant(slug, dict(_personas_built[slug]))


@pytest.fixture(scope="session")
def _personas(django_db_setup: Any, django_db_blocker: Any) -> None:
    # Session-scoped, so set up before the test's transaction opens: the rows are committed.
    with django_db_blocker.unblock():
        if Organization.objects.exists():  # a database kept from an earlier run (--reuse-db)
            call_command("flush", interactive=False, verbosity=0)
        _drop_indexes_of_organizations_gone()
        _build_personas()


def _drop_indexes_of_organizations_gone() -> None:
    """Indexes built for an organization are no rows: a flush leaves them (the last test of an
    earlier run's, or a ``transaction=True`` test's), and a later test would find them beside its
    own organizations'. The sweep drops those of organizations gone."""
    if tenant_indexes.existing():
        tenant_indexes.sweep()


def _flushes_the_database(item: pytest.Item) -> bool:
    """Whether pytest-django ran ``item`` as a TransactionTestCase (which empties every table after)."""
    marker = item.get_closest_marker("django_db")
    if marker is not None and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences")):
        return True
    names = getattr(item, "fixturenames", ())
    return any(name in names for name in ("transactional_db", "live_server", "django_db_reset_sequences"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    yield
    # With no next test the session is over: the test database is already gone.
    if nextitem is not None and _personas_built and _flushes_the_database(item):
        with item.config.stash[blocking_manager_key].unblock():
            _drop_indexes_of_organizations_gone()
            _build_personas()


def _uses_the_database(item: pytest.Item) -> bool:
    return item.get_closest_marker("django_db") is not None or "_django_db_helper" in getattr(item, "fixturenames", ())


@pytest.fixture(scope="session", autouse=True)
def _personas_for_database_tests(request: pytest.FixtureRequest) -> None:
    """Every test that uses the database finds the personas, whichever test runs first. Built before
    the first test's own fixtures (session scope), so never inside a test's rolled-back transaction."""
    if any(_uses_the_database(item) for item in request.session.items):
        request.getfixturevalue("_personas")


@pytest.fixture(scope="module")
def module_db(_personas: None, django_db_blocker: Any) -> Iterator[None]:
    """One transaction around a module's tests, rolled back after its last: rows a module-scoped
    fixture builds in it are built once and seen by each of the module's tests (Django's
    setUpTestData). A test's own transaction is a savepoint inside it, so what a test changes is
    undone when it ends. Only for modules whose tests all run in a transaction (no
    ``transaction=True``, no process that would need the rows committed)."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield
        transaction.set_rollback(True)


@pytest.fixture
def acme(_personas: None, db: Any) -> Tenant:
    return load_tenant("acme")


@pytest.fixture
def globex(_personas: None, db: Any) -> Tenant:
    return load_tenant("globex")


@pytest.fixture
def superuser_principal(acme: Tenant) -> Principal:
    user = User.objects.create_superuser(username="root", password="unused-password-1")
    return principal_for_user(user=user, organization=acme.organization)  # as the admin site has it


MemoryFactory = Callable[..., Memory]


def spelled_number(number: int) -> str:
    return "".join("abcdefghij"[int(digit)] for digit in str(number))


@pytest.fixture
def make_memory(acme: Tenant) -> MemoryFactory:
    return memory_factory(acme)


def memory_factory(acme: Tenant) -> MemoryFactory:
    """make_memory's factory, for fixtures that build before the test's own database access."""
    counter = iter(range(1, 10_000))

    def make(principal: Principal | None = None, **fields: Any) -> Memory:
        n = next(counter)
        data: dict[str, Any] = {
            "scope_type": "organization",
            "memory_type": "fact",
            # The number spelt in letters: texts alike but for a number are contradiction candidates.
            "current_content": f"Fact {spelled_number(n)} about the deployment pipeline.",
        }
        data.update(fields)
        # Setting up: a repository named here is created as an admin would have created it.
        return memory_create(principal=principal or acme.agent, data=data, create_repository=True)[0]

    return make


@pytest.fixture(scope="session")
def static_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where this test process's `serve` runs collect the static files (not the data directory other
    runs use): shared, so only the first run compresses them (memory_platform.staticfiles)."""
    return tmp_path_factory.mktemp("static")


@pytest.fixture(autouse=True)
def _test_settings(settings: Any) -> None:
    # The personas and staff users all get passwords; the production hasher is slow on purpose.
    settings.PASSWORD_HASHERS = FAST_PASSWORD_HASHERS
    # A test reads the access counts its searches make after flush_access(), in its own transaction:
    # a flush of the background thread (tests/search/test_search_access_tracking.py has it) could
    # take them first, on a connection that cannot see the test's memories.
    settings.MEMORY_ACCESS_FLUSH_IN_BACKGROUND = False


# Fixtures that start other processes (web servers, workers, stdio servers, Node tools): their tests
# are marked ``processes``, as are the files that start theirs by hand (``pytestmark``).
PROCESS_FIXTURES = frozenset({"server_env", "subprocess_env"})
PROCESS_MARKERS = ("processes", "browser", "mcp_live")


def on_ci() -> bool:
    """Under CI (``CI`` set and not ``false``/``0``): a test missing a system package fails there, skips elsewhere."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def starts_processes(item: pytest.Item) -> bool:
    names = set(getattr(item, "fixturenames", ()))
    return bool(names & PROCESS_FIXTURES) or any(item.get_closest_marker(name) for name in PROCESS_MARKERS)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject.toml): a worker per core, and one more when tests that start other
    processes run. Those tests spend much of their time waiting for the processes they started
    (a server to answer, a worker to beat, a load to run its course); a third worker on two cores
    keeps both busy meanwhile. The fast loop (``-m "not processes"``) waits on nothing."""
    cores = len(os.sched_getaffinity(0))
    return cores if "not processes" in (config.getoption("markexpr") or "") else cores + 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = Path(__file__).parent
    real = tuple(tests / directory for directory in REAL_EMBEDDER_DIRECTORIES)
    with_processes: set[Path] = set()
    for item in items:
        if any(item.path.is_relative_to(folder) for folder in real):
            item.add_marker(pytest.mark.real_embedder)
        if starts_processes(item):
            item.add_marker(pytest.mark.processes)
            with_processes.add(item.path)
    # Files that start processes first, the rest after, each group in its own order: the workers
    # take files in this order (--dist loadfile, --no-loadscope-reorder), so the long ones start
    # early and the many short ones even out the end instead of one long file running alone.
    items.sort(key=lambda item: item.path not in with_processes)


HASH_EMBEDDER = HashEmbedder()
_real_embedder: EmbeddingProvider | None = None


def real_embedding_provider() -> EmbeddingProvider:
    """The provider the settings choose (the local model), built once per process: loading costs seconds."""
    global _real_embedder  # noqa: PLW0603
    if _real_embedder is None:
        reset_provider(None)
        _real_embedder = get_provider()
    return _real_embedder


@pytest.fixture(autouse=True)
def embedding_provider(request: pytest.FixtureRequest) -> Iterator[EmbeddingProvider]:
    """The process-wide provider for this test: the real model if marked ``real_embedder``, else hashes."""
    provider = real_embedding_provider() if request.node.get_closest_marker("real_embedder") else HASH_EMBEDDER
    reset_provider(provider)
    yield provider
    reset_provider(provider)  # whatever the test installed is undone


def other_session() -> psycopg.Connection[Any]:
    """A connection of its own to the test database: another process, as far as locks go."""
    return connect(connection.settings_dict, connection.settings_dict["NAME"])


def database_url_of_the_test_database() -> str:
    """A DATABASE_URL naming the database this test session runs on (settings' database_from_url form)."""
    db = connection.settings_dict
    credentials = quote(db["USER"], safe="")
    if db["PASSWORD"]:
        credentials += ":" + quote(db["PASSWORD"], safe="")
    options: dict[str, Any] = dict(db["OPTIONS"])
    host, port = str(db["HOST"]), str(db["PORT"] or "")
    if host.startswith("/"):  # the embedded server's Unix socket directory
        options["host"] = host
        if port:
            options["port"] = port
        location = ""
    else:
        location = f"{host}:{port}" if port else host
    query = f"?{urlencode(options)}" if options else ""
    return f"postgresql://{credentials}@{location}/{quote(db['NAME'], safe='')}{query}"
