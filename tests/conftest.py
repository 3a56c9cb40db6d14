"""Shared fixtures: two organizations with a person or token for every role.

``acme`` is the organization under test; ``globex`` is the outsider whose principals must see
and touch nothing of acme's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from django.db import connection

from memories.models import Memory
from memories.services import memory_create
from organizations.models import Membership, Organization, Role, User
from organizations.principal import Principal
from organizations.services import principal_for_token, token_create


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


@pytest.fixture
def acme(db: Any) -> Tenant:
    return _tenant("acme")


@pytest.fixture
def globex(db: Any) -> Tenant:
    return _tenant("globex")


@pytest.fixture
def superuser_principal(acme: Tenant) -> Principal:
    user = User.objects.create_superuser(username="root", password="unused-password-1")
    return Principal(organization=acme.organization, role=Role.ADMIN, user=user, is_superuser=True)


MemoryFactory = Callable[..., Memory]


@pytest.fixture
def make_memory(acme: Tenant) -> MemoryFactory:
    counter = iter(range(1, 10_000))

    def make(principal: Principal | None = None, **fields: Any) -> Memory:
        n = next(counter)
        data: dict[str, Any] = {
            "scope_type": "organization",
            "memory_type": "fact",
            "current_content": f"Fact number {n} about the deployment pipeline.",
        }
        data.update(fields)
        return memory_create(principal=principal or acme.agent, data=data)[0]

    return make


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    # The personas and staff users all get passwords; the production hasher is slow on purpose.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


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
