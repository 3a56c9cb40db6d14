"""`manage.py add_member`: a person gets a role and an admin login in one step."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from organizations.models import AuditEvent, Membership, Role, User
from tests.conftest import Tenant


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("add_member", *args, stdout=out)
    return out.getvalue()


def _json(*args: str) -> dict[str, object]:
    payload: dict[str, object] = json.loads(_run(*args, "--json"))
    return payload


def test_create_makes_a_staff_user_and_a_link_that_sets_the_password_once(acme: Tenant, client: Client) -> None:
    payload = _json("--organization", "acme", "--user", "carol", "--role", "curator", "--create", "--email", "c@x.io")

    carol = User.objects.get(username="carol")
    assert (carol.email, carol.is_staff, carol.is_superuser, carol.has_usable_password()) == (
        "c@x.io",
        True,
        False,
        False,
    )
    assert Membership.objects.get(user=carol).role == Role.CURATOR
    assert payload["created_user"] is True and payload["previous_role"] is None
    assert payload["login_url"] == "http://127.0.0.1:8000/admin/"
    link = str(payload["set_password_link"])
    assert link.startswith("http://127.0.0.1:8000/accounts/set-password/")

    form = client.get(link.removeprefix("http://127.0.0.1:8000"), follow=True)
    assert form.status_code == 200 and form.context["validlink"]
    # The page says whose password it sets, and shows someone not logged in no admin sidebar.
    page = form.content.decode()
    assert "The password of the account <strong>carol</strong>" in page
    assert 'id="nav-sidebar"' not in page and "have permission" not in page
    done = client.post(
        form.redirect_chain[-1][0], {"new_password1": "a-Long-pass-42", "new_password2": "a-Long-pass-42"}, follow=True
    )
    assert done.redirect_chain[-1][0] == "/accounts/set-password/done/"
    assert 'href="/admin/login/"' in done.content.decode()
    # Logging in as a person does, through the login form (logins are throttled per request).
    logged_in = client.post("/admin/login/?next=/admin/", {"username": "carol", "password": "a-Long-pass-42"})
    assert logged_in.status_code == 302
    assert client.get("/admin/").status_code == 200

    client.logout()
    again = client.get(link.removeprefix("http://127.0.0.1:8000"), follow=True)
    assert not again.context["validlink"]
    assert "Ask an organization admin for a new one" in again.content.decode()


def test_plain_output_names_the_member_the_link_and_the_login(acme: Tenant) -> None:
    output = _run(
        "--organization", "acme", "--user", "dan", "--role", "reader", "--create", "--base-url", "https://m.example/"
    )

    assert re.fullmatch(
        r"Created user 'dan' and made them reader of 'acme'\.\n"
        r"Set-password link for dan \(works once, for 3 days; hand it over privately\): "
        r"https://m\.example/accounts/set-password/\w+/[\w-]+/\n"
        r"They log in at https://m\.example/admin/ as dan\.\n",
        output,
    ), output


def test_an_existing_user_is_added_then_changes_role(acme: Tenant, globex: Tenant) -> None:
    output = _run("--organization", "acme", "--user", "globex-person", "--role", "reader")
    assert output.splitlines()[0] == "Made 'globex-person' reader of 'acme'."

    payload = _json("--organization", "acme", "--user", "globex-person", "--role", "curator")

    assert payload == {
        "organization": "acme",
        "user": "globex-person",
        "role": "curator",
        "previous_role": "reader",
        "created_user": False,
        # They set a password long ago: no link, and nobody takes their account over.
        "set_password_link": None,
        "login_url": "http://127.0.0.1:8000/admin/",
    }
    person = User.objects.get(username="globex-person")
    assert person.is_staff
    assert dict(Membership.objects.filter(user=person).values_list("organization__slug", "role")) == {
        "acme": "curator",
        "globex": "agent",
    }
    assert _run("--organization", "acme", "--user", "globex-person", "--role", "curator").startswith(
        "'globex-person' is already curator of 'acme'."
    )


def test_the_operator_gets_a_new_link_for_someone_who_never_set_a_password(acme: Tenant) -> None:
    _run("--organization", "acme", "--user", "erin", "--role", "agent", "--create")

    payload = _json("--organization", "acme", "--user", "erin", "--role", "curator")

    assert payload["set_password_link"]
    assert payload["previous_role"] == "agent"


def test_every_change_is_audited(acme: Tenant) -> None:
    _run("--organization", "acme", "--user", "fay", "--role", "agent", "--create")
    _run("--organization", "acme", "--user", "fay", "--role", "admin")
    _run("--organization", "acme", "--user", "fay", "--role", "admin")  # no change, nothing recorded

    events = AuditEvent.objects.filter(organization=acme.organization, action__in=["user.create", "membership.set"])
    assert [(e.action, e.data.get("role"), e.data.get("previous_role"), e.actor) for e in events.order_by("id")] == [
        ("user.create", None, None, "operator (manage.py)"),
        ("membership.set", "agent", None, "operator (manage.py)"),
        ("membership.set", "admin", "agent", "operator (manage.py)"),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--organization", "initech", "--user", "x", "--role", "reader"],
            "no organization 'initech' (known: acme, globex); create it with create_organization",
        ),
        (
            ["--organization", "acme", "--user", "x", "--role", "root"],
            "unknown role 'root'; use one of: reader, agent, curator, admin",
        ),
        (
            ["--organization", "acme", "--user", "nobody", "--role", "reader"],
            "no user 'nobody'; add --create to create the user",
        ),
        (
            ["--organization", "acme", "--user", "acme-person", "--role", "reader", "--create"],
            "user 'acme-person' already exists; leave out --create to add them",
        ),
        (
            ["--organization", "acme", "--user", "acme-person", "--role", "reader", "--email", "a@b.io"],
            "--email is set only with --create (a user may belong to other organizations)",
        ),
        (["--organization", "acme", "--user", "bad name!", "--role", "reader", "--create"], "Enter a valid username"),
        (
            ["--organization", "acme", "--user", "gil", "--role", "reader", "--create", "--email", "nope"],
            "Enter a valid email address.",
        ),
    ],
)
def test_errors_say_what_is_wrong_and_change_nothing(acme: Tenant, args: list[str], message: str) -> None:
    users, memberships, events = User.objects.count(), Membership.objects.count(), AuditEvent.objects.count()

    with pytest.raises(CommandError) as refused:
        _run(*args)

    assert str(refused.value).startswith(message), str(refused.value)
    assert (User.objects.count(), Membership.objects.count(), AuditEvent.objects.count()) == (
        users,
        memberships,
        events,
    )
