"""A person logged in (the admin's session) uses the API as their membership allows.

Members of one organization act in it; members of several name it in X-Organization. Unsafe
methods need the CSRF token, as everywhere in Django.
"""

from __future__ import annotations

import json
from typing import Any

from django.test import Client

from memories.models import Memory
from organizations.models import Membership, User
from tests.conftest import Tenant
from tests.rest_api.conftest import API, error_of, memory_body


def session(user: User, *, csrf: bool = False) -> Client:
    client = Client(HTTP_HOST="localhost", enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


def post_json(client: Client, path: str, body: object, **headers: str) -> Any:
    return client.post(API + path, json.dumps(body), content_type="application/json", **headers)


def person(acme: Tenant) -> User:
    return User.objects.get(username="acme-person")


def test_member_of_one_organization_acts_in_it(acme: Tenant) -> None:
    client = session(person(acme))

    status = client.get(f"{API}/status/").json()
    created = post_json(client, "/memories/", memory_body(scope_type="user", current_content="I review on Mondays."))

    assert (status["organization"], status["role"], status["principal"]) == ("acme", "agent", "user acme-person")
    assert created.status_code == 201
    memory = Memory.objects.get()
    assert (memory.organization.slug, memory.owner, memory.created_by) == ("acme", person(acme), person(acme))


def test_session_role_is_the_membership_role(acme: Tenant) -> None:
    Membership.objects.filter(user=person(acme)).update(role="reader")

    response = post_json(session(person(acme)), "/memories/", memory_body())

    error_of(response, 403, "permission_denied")


def test_member_of_several_organizations_must_name_one(acme: Tenant, globex: Tenant) -> None:
    user = person(acme)
    Membership.objects.create(user=user, organization=globex.organization, role="reader")
    client = session(user)

    error = error_of(client.get(f"{API}/status/"), 401, "unauthenticated")
    assert "X-Organization" in error["message"]

    in_acme = client.get(f"{API}/status/", HTTP_X_ORGANIZATION="acme").json()
    in_globex = client.get(f"{API}/status/", HTTP_X_ORGANIZATION="globex").json()
    assert (in_acme["organization"], in_acme["role"]) == ("acme", "agent")
    assert (in_globex["organization"], in_globex["role"]) == ("globex", "reader")


def test_organization_of_which_one_is_not_a_member_is_refused(acme: Tenant, globex: Tenant) -> None:
    client = session(person(acme))

    error = error_of(client.get(f"{API}/memories/", HTTP_X_ORGANIZATION="globex"), 401, "unauthenticated")
    assert error["message"] == "organization 'globex' not found"
    error = error_of(client.get(f"{API}/memories/", HTTP_X_ORGANIZATION="initech"), 401, "unauthenticated")
    # Whether it exists or is someone else's reads the same.
    assert error["message"] == "organization 'initech' not found"


def test_user_without_membership_is_refused(acme: Tenant) -> None:
    loner = User.objects.create_user(username="loner", password="unused-password-1")

    error = error_of(session(loner).get(f"{API}/status/"), 401, "unauthenticated")

    assert "belong to none" in error["message"]


def test_unsafe_method_without_csrf_token_is_refused(acme: Tenant) -> None:
    client = session(person(acme), csrf=True)
    assert client.get(f"{API}/memories/").status_code == 200  # safe methods need no token

    error = error_of(post_json(client, "/memories/", memory_body()), 403, "permission_denied")

    assert "CSRF" in error["message"]
    assert not Memory.objects.exists()


def test_unsafe_method_with_the_csrf_token_is_accepted(acme: Tenant) -> None:
    client = session(person(acme), csrf=True)
    client.get("/admin/login/")  # sets the CSRF cookie
    token = client.cookies["csrftoken"].value

    response = post_json(client, "/memories/", memory_body(), HTTP_X_CSRFTOKEN=token)

    assert response.status_code == 201


def test_bearer_token_needs_no_csrf_token(acme: Tenant) -> None:
    client = Client(HTTP_HOST="localhost", enforce_csrf_checks=True)

    response = post_json(client, "/memories/", memory_body(), HTTP_AUTHORIZATION=f"Bearer {acme.raw_tokens['agent']}")

    assert response.status_code == 201


def test_a_member_who_is_not_staff_logs_in_to_the_browsable_api(acme: Tenant) -> None:
    user = person(acme)
    user.set_password("a-long-test-password-1")
    user.save()
    client = Client(HTTP_HOST="localhost")

    login = client.post(
        "/api/auth/login/",
        {"username": "acme-person", "password": "a-long-test-password-1", "next": f"{API}/status/"},
    )
    assert login.status_code == 302
    assert login["Location"] == f"{API}/status/"

    page = client.get(f"{API}/status/", HTTP_ACCEPT="text/html")
    assert page.status_code == 200
    assert "acme-person" in page.content.decode()
    assert client.get(f"{API}/status/").json()["principal"] == "user acme-person"
