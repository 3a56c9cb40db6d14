from __future__ import annotations

import hashlib
import re

from django.db import connection

from organizations.models import ApiToken, AuditEvent, Membership, Role, User
from organizations.tokens import principal_for_token, token_create
from tests.conftest import Tenant

RAW_TOKEN = re.compile(r"^mp_(?P<prefix>[0-9a-f]{8})_(?P<secret>[A-Za-z0-9_-]{40,})$")


def _every_row_as_text() -> str:
    """Every row of every table, as text: where a leaked secret would show up."""
    rows: list[str] = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f'SELECT row_to_json(t)::text FROM "{table}" t')  # noqa: S608 - table names from the catalog
            rows.extend(row for (row,) in cursor.fetchall())
    return "\n".join(rows)


def test_token_is_mp_prefix_secret_and_only_its_hash_is_stored(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role=Role.AGENT, name="ci-bot")

    match = RAW_TOKEN.match(issued.raw)
    assert match, issued.raw
    stored = ApiToken.objects.get(pk=issued.token.pk)
    assert stored.prefix == match["prefix"]
    assert stored.secret_hash == hashlib.sha256(issued.raw.encode()).hexdigest()

    everything = _every_row_as_text()
    assert match["prefix"] in everything  # the search does look at the token's row
    assert match["secret"] not in everything
    assert issued.raw not in everything


def test_the_raw_token_is_not_kept_on_the_model(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role=Role.READER)

    reloaded = ApiToken.objects.get(pk=issued.token.pk)
    assert issued.raw not in str(vars(reloaded))
    assert issued.raw not in str(reloaded)
    assert str(reloaded).startswith(f"mp_{reloaded.prefix}_…")


def test_principal_for_token_yields_organization_role_and_user(acme: Tenant) -> None:
    user = User.objects.create_user(username="dana", password="unused-password-1")
    Membership.objects.create(user=user, organization=acme.organization, role=Role.CURATOR)
    issued = token_create(principal=acme.admin, role=Role.AGENT, user=user)

    principal = principal_for_token(issued.raw)

    assert principal.organization == acme.organization
    assert principal.role == Role.AGENT
    assert principal.user == user
    assert principal.token == issued.token
    assert principal.is_superuser is False
    assert principal.label == f"token mp_{issued.token.prefix}_… for dana"


def test_surrounding_whitespace_is_forgiven(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role=Role.READER)

    assert principal_for_token(f"  {issued.raw}\n").token == issued.token


def test_each_token_is_different(acme: Tenant) -> None:
    first = token_create(principal=acme.admin, role=Role.AGENT)
    second = token_create(principal=acme.admin, role=Role.AGENT)

    assert first.raw != second.raw
    assert first.token.prefix != second.token.prefix
    assert principal_for_token(first.raw).token == first.token
    assert principal_for_token(second.raw).token == second.token


def test_creation_is_audited_without_the_secret(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role=Role.CURATOR, name="reviewer")

    event = AuditEvent.objects.get(action="token.create", target_id=issued.token.prefix)
    assert event.organization == acme.organization
    assert event.actor == acme.admin.label
    assert event.data["role"] == Role.CURATOR
    assert issued.raw not in str(event.data)
