"""No credentials, or bad ones: 401 in the error shape, with a WWW-Authenticate challenge."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from organizations.models import ApiToken, Membership
from organizations.tokens import token_create, token_revoke
from tests.conftest import Tenant
from tests.rest_api.conftest import API, Api, client_with, error_of
from tests.rest_api.test_api_role_matrix import ENDPOINTS

PLACEHOLDERS = {
    "memory": uuid.uuid4(),
    "other": uuid.uuid4(),
    "locked": uuid.uuid4(),
    "deleted": uuid.uuid4(),
    "link": 1,
    "triple": 1,
    "entity": 1,
    "repository": "payments-api",
    "token": "abcd1234",
    "proposal": uuid.uuid4(),
    "applied": uuid.uuid4(),
    "deprecated": uuid.uuid4(),
}


def _challenged(response: object, message: str | None = None) -> dict[str, object]:
    error = error_of(response, 401, "unauthenticated")
    assert response["WWW-Authenticate"] == 'Bearer realm="memory-platform"'  # type: ignore[index]
    if message is not None:
        assert error["message"] == message
    return error


def test_anonymous_is_refused_on_every_endpoint(api: Api) -> None:
    anonymous = api(None)
    for name, (_, method, path, body, _) in ENDPOINTS.items():
        url = API + path.format(**PLACEHOLDERS)
        response = getattr(anonymous, method)(url, body) if body is not None else getattr(anonymous, method)(url)
        error = _challenged(response)
        assert "Authorization: Bearer <token>" in str(error["message"]), name


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("Basic dXNlcjpwYXNz", "unsupported authorization scheme 'Basic'; send 'Authorization: Bearer <token>'"),
        ("Bearer", "the Bearer credential is empty; send 'Authorization: Bearer <token>'"),
        ("Bearer not-a-token", "malformed token: expected 'mp_<prefix>_<secret>' as the Bearer credential"),
        (f"Bearer mp_00000000_{'x' * 43}", "invalid token"),
    ],
)
def test_bad_credentials_are_refused(acme: Tenant, header: str, message: str) -> None:
    client = client_with(HTTP_AUTHORIZATION=header)
    _challenged(client.get(f"{API}/memories/"), message)


def test_wrong_secret_of_a_real_token_is_refused(acme: Tenant) -> None:
    _challenged(client_with(acme.raw_tokens["agent"][:-1] + "x").get(f"{API}/status/"), "invalid token")


def test_revoked_token_is_refused(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role="agent")
    assert client_with(issued.raw).get(f"{API}/status/").status_code == 200
    token_revoke(principal=acme.admin, prefix=issued.token.prefix)

    response = client_with(issued.raw).get(f"{API}/status/")

    _challenged(response, "this token has been revoked; ask an organization admin for a new one")


def test_expired_token_is_refused(acme: Tenant) -> None:
    issued = token_create(principal=acme.admin, role="agent", expires_at=timezone.now() + timedelta(days=1))
    ApiToken.objects.filter(pk=issued.token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    response = client_with(issued.raw).post(f"{API}/memories/search/", {"query": "x"})

    _challenged(response, "this token has expired; ask an organization admin for a new one")


def test_personal_token_of_a_departed_member_is_refused(acme: Tenant) -> None:
    Membership.objects.filter(user__username="acme-person").delete()

    error = _challenged(client_with(acme.raw_tokens["person"]).get(f"{API}/memories/"))

    assert "no longer a member of acme" in str(error["message"])


def test_good_token_is_accepted(api: Api) -> None:
    response = api("reader").get(f"{API}/status/")
    assert response.status_code == 200
    assert (response.json()["organization"], response.json()["role"]) == ("acme", "reader")
