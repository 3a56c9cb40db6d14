"""`manage.py serve --prepare-only`: the first run creates a demo organization, an agent token
and an admin login, each secret printed once; later runs print no secret again."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from organizations.models import ApiToken, Organization, Role, User
from organizations.tokens import principal_for_token

TOKEN = re.compile(r"Agent token \(shown once, store it now\): (mp_[0-9a-f]{8}_\S+)")
LOGIN = re.compile(r"Admin login \(shown once\): admin / (\S+)")


@pytest.fixture(autouse=True)
def _static_root(settings: Any, static_root: Path) -> None:
    settings.STATIC_ROOT = static_root


def _serve(*args: str) -> str:
    out = io.StringIO()
    call_command("serve", "--prepare-only", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_the_first_run_creates_the_demo_organization_token_and_login(transactional_db: Any) -> None:
    output = _serve()

    token = TOKEN.search(output)
    assert token, output
    principal = principal_for_token(token[1])
    assert principal.organization == Organization.objects.get(slug="demo")
    assert principal.role == Role.AGENT

    login = LOGIN.search(output)
    assert login, output
    admin = User.objects.get(username="admin")
    assert admin.check_password(login[1])
    assert admin.is_superuser and admin.is_staff

    assert "Memory Platform is prepared." in output
    assert "/healthz" in output


@pytest.mark.django_db(transaction=True)
def test_a_second_run_prints_no_secret_and_says_how_to_get_another_token(transactional_db: Any) -> None:
    first = _serve()
    first_token = TOKEN.search(first)
    assert first_token

    second = _serve()

    assert not TOKEN.search(second)
    assert not LOGIN.search(second)
    assert first_token[1] not in second
    assert "Demo organization 'demo' exists; its token was printed on the first run." in second
    assert "manage.py create_token --organization demo --role agent" in second
    assert "manage.py changepassword admin" in second
    assert Organization.objects.filter(slug="demo").count() == 1
    assert ApiToken.objects.filter(organization__slug="demo").count() == 1
    assert User.objects.filter(username="admin").count() == 1


@pytest.mark.django_db(transaction=True)
def test_no_demo_creates_neither_organization_nor_login(transactional_db: Any) -> None:
    output = _serve("--no-demo")

    assert not TOKEN.search(output)
    assert not LOGIN.search(output)
    assert not Organization.objects.filter(slug="demo").exists()
    assert not User.objects.filter(username="admin").exists()


@pytest.mark.django_db(transaction=True)
def test_the_suggested_command_for_another_token_works(transactional_db: Any) -> None:
    _serve()
    suggestion = re.search(r"manage\.py (create_token .+)$", _serve(), re.MULTILINE)
    assert suggestion

    out = io.StringIO()
    call_command(*suggestion[1].split(), "--json", stdout=out)

    assert '"organization": "demo"' in out.getvalue()
    assert ApiToken.objects.filter(organization__slug="demo").count() == 2
