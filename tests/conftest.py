"""Shared fixtures: two organizations with a person or token for every role, and the embedder.

``acme`` is the organization under test; ``globex`` is the outsider whose principals must see
and touch nothing of acme's. Both are built once per test process (per xdist worker) and
committed, so each test's rolled-back transaction returns to them; a ``transaction=True`` test
empties every table when it ends, after which they are built again (see pytest_runtest_teardown).
The principals are loaded afresh for every test: they hold model instances a test may change.

Every test embeds with ``tests.embedder.HashEmbedder`` unless it is marked ``real_embedder`` (all
of tests/search and tests/worker are): only retrieval and the model itself need the real model.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from django.db import connection, transaction
from django.db.models import Model
from django.db.models.deletion import Collector
from django.test import override_settings
from django.utils import timezone
from pytest_django.plugin import blocking_manager_key

from memories.embeddings import EmbeddingProvider, get_provider, reset_provider
from memories.models import Memory
from memories.services import memory_create
from organizations.models import ApiToken, Membership, Organization, Role, User
from organizations.principal import Principal
from organizations.tokens import principal_for_token, token_create
from tests.embedder import HashEmbedder

# The live server (granian, as `manage.py serve` runs it) and its environment, for every directory that needs one.
pytest_plugins = ["tests.live_server"]

FAST_PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
PERSONA_SLUGS = ("acme", "globex")
# Directories whose every test is about retrieval or the embedding model: they get the real one.
REAL_EMBEDDER_DIRECTORIES = ("search", "worker", "lifecycle", "trust")  # duplicate detection is retrieval too


@dataclass
class Tenant:
    organization: Organization
    admin: Principal
    curator: Principal
    agent: Principal
    reader: Principal
    # A person's own token: needed for user-scope memories.
    person: Principal
    raw_tokens: dict[str, str]


def _tenant(slug: str) -> Tenant:
    organization = Organization.objects.create(slug=slug, name=slug.title())
    operator = Principal.for_operator(organization, "tests")
    raw: dict[str, str] = {}
    principals: dict[str, Principal] = {}
    for role in Role.values:
        issued = token_create(principal=operator, role=role, name=f"{slug}-{role}")
        raw[role] = issued.raw
        principals[role] = principal_for_token(issued.raw)
    person_user = User.objects.create_user(username=f"{slug}-person", password="unused-password-1")
    Membership.objects.create(user=person_user, organization=organization, role=Role.AGENT)
    person = token_create(principal=operator, role=Role.AGENT, name=f"{slug}-person", user=person_user)
    raw["person"] = person.raw
    return Tenant(
        organization=organization,
        admin=principals[Role.ADMIN],
        curator=principals[Role.CURATOR],
        agent=principals[Role.AGENT],
        reader=principals[Role.READER],
        person=principal_for_token(person.raw),
        raw_tokens=raw,
    )


@dataclass
class _Persona:
    """A persona committed in this process's test database."""

    raw_tokens: dict[str, str]
    # Every row that exists because of it, as (table, primary key column, keys): what hiding deletes.
    rows: list[tuple[str, str, list[Any]]]


_personas_built: dict[str, _Persona] = {}


def _rows_of(organization: Organization, person: User) -> list[tuple[str, str, list[Any]]]:
    # Django's collector finds every dependent row once, here; deleting them per test by key takes
    # a few statements instead of the collector's query per related table (tens of milliseconds).
    collector = Collector(using=connection.alias)
    collector.collect([organization])
    collector.collect([person])
    nulled = [queryset for querysets in collector.field_updates.values() for queryset in querysets]
    assert not any(queryset.exists() for queryset in nulled), "hiding a persona would need SET_NULL updates"
    rows: dict[type[Model], set[Any]] = {}
    for model, instances in collector.data.items():
        rows.setdefault(model, set()).update(instance.pk for instance in instances)
    for queryset in collector.fast_deletes:
        rows.setdefault(queryset.model, set()).update(queryset.values_list("pk", flat=True))
    return [(model._meta.db_table, model._meta.pk.column, sorted(keys)) for model, keys in rows.items() if keys]


def _build_personas() -> None:
    # Built outside any test: the production password hasher would cost ~0.2 s per user.
    with override_settings(PASSWORD_HASHERS=FAST_PASSWORD_HASHERS):
        for slug in PERSONA_SLUGS:
            tenant = _tenant(slug)
            person = tenant.person.user
            assert person is not None
            _personas_built[slug] = _Persona(raw_tokens=tenant.raw_tokens, rows=_rows_of(tenant.organization, person))


def _hide(slug: str) -> None:
    """Delete a persona inside the current test's transaction (foreign keys are checked at its end)."""
    # atomic: a transaction=True test runs in autocommit, where deferring constraints does nothing.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        for table, column, keys in _personas_built[slug].rows:
            cursor.execute(f'DELETE FROM "{table}" WHERE "{column}" = ANY(%s)', [keys])  # noqa: S608 - model names


# Personas a test did not ask for are deleted inside its transaction (see _personas_as_requested),
# so it sees the database it would see if they were built per test; these are the ones hidden now.
_hidden: set[str] = set()


def _load_tenant(slug: str) -> Tenant:
    """The committed persona, with fresh principals: what principal_for_token gives for its tokens."""
    if slug in _hidden:
        # Asked for only after the test started (request.getfixturevalue): build it in the test.
        _hidden.discard(slug)
        return _tenant(slug)
    raw = _personas_built[slug].raw_tokens
    tokens = {
        token.name: token
        for token in ApiToken.objects.select_related("organization", "user").filter(organization__slug=slug)
    }
    # As if the tokens had just been created and used, as they were when built per test.
    now = timezone.now()
    ApiToken.objects.filter(pk__in=[token.pk for token in tokens.values()]).update(last_used_at=now)
    principals: dict[str, Principal] = {}
    for role in raw:
        token = tokens[f"{slug}-{role}"]
        token.last_used_at = now
        principals[role] = Principal(
            organization=token.organization,
            role=token.role,
            user=token.user,
            token=token,
            is_superuser=bool(token.user and token.user.is_superuser),
        )
    return Tenant(
        organization=Organization.objects.get(slug=slug),
        admin=principals[Role.ADMIN],
        curator=principals[Role.CURATOR],
        agent=principals[Role.AGENT],
        reader=principals[Role.READER],
        person=principals["person"],
        raw_tokens=dict(raw),
    )


@pytest.fixture(scope="session")
def _personas(django_db_setup: Any, django_db_blocker: Any) -> None:
    # Session-scoped, so set up before the test's transaction opens: the rows are committed.
    with django_db_blocker.unblock():
        _build_personas()


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
            _build_personas()


@pytest.fixture(autouse=True)
def _personas_as_requested(request: pytest.FixtureRequest) -> None:
    """Hide the committed personas this test does not use: tests that count organizations, users
    or tokens, or that build their own "acme", must not find them."""
    _hidden.clear()
    if not _personas_built:
        return
    uses_db = request.node.get_closest_marker("django_db") or "_django_db_helper" in request.fixturenames
    unused = [slug for slug in PERSONA_SLUGS if slug not in request.fixturenames]
    if not uses_db or not unused:
        return
    request.getfixturevalue("_django_db_helper")  # inside the test's transaction: rolled back after
    for slug in unused:
        _hide(slug)
    _hidden.update(unused)


@pytest.fixture
def acme(_personas: None, db: Any) -> Tenant:
    return _load_tenant("acme")


@pytest.fixture
def globex(_personas: None, db: Any) -> Tenant:
    return _load_tenant("globex")


@pytest.fixture
def superuser_principal(acme: Tenant) -> Principal:
    user = User.objects.create_superuser(username="root", password="unused-password-1")
    return Principal(organization=acme.organization, role=Role.ADMIN, user=user, is_superuser=True)


MemoryFactory = Callable[..., Memory]


def spelled_number(number: int) -> str:
    return "".join("abcdefghij"[int(digit)] for digit in str(number))


@pytest.fixture
def make_memory(acme: Tenant) -> MemoryFactory:
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


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    # The personas and staff users all get passwords; the production hasher is slow on purpose.
    settings.PASSWORD_HASHERS = FAST_PASSWORD_HASHERS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = Path(__file__).parent
    real = tuple(tests / directory for directory in REAL_EMBEDDER_DIRECTORIES)
    for item in items:
        if any(item.path.is_relative_to(folder) for folder in real):
            item.add_marker(pytest.mark.real_embedder)


_hash_embedder = HashEmbedder()
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
    provider = real_embedding_provider() if request.node.get_closest_marker("real_embedder") else _hash_embedder
    reset_provider(provider)
    yield provider
    reset_provider(provider)  # whatever the test installed is undone


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
