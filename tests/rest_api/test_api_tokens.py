"""API tokens, for admins: list without secrets, create (the secret shown once), revoke."""

from __future__ import annotations

from organizations.models import ApiToken
from tests.conftest import Tenant
from tests.rest_api.conftest import API, Api, client_with, error_of

TOKEN_FIELDS = {"prefix", "name", "role", "user", "created_at", "expires_at", "revoked_at", "last_used_at"}


def test_admin_lists_tokens_without_secrets(api: Api, acme: Tenant) -> None:
    response = api("admin").get(f"{API}/tokens/")

    assert response.status_code == 200
    tokens = response.json()
    assert {t["name"] for t in tokens} == {"acme-admin", "acme-curator", "acme-agent", "acme-reader", "acme-person"}
    assert all(set(t) == TOKEN_FIELDS for t in tokens)
    for raw in acme.raw_tokens.values():
        assert raw not in response.content.decode()
        # The secret is everything after "mp_<prefix>_" (it may itself contain "_").
        assert raw.split("_", 2)[2] not in response.content.decode()


def test_admin_creates_a_token_and_sees_its_secret_once(api: Api) -> None:
    response = api("admin").post(f"{API}/tokens/", {"role": "agent", "name": "ci", "user": "acme-person"})

    assert response.status_code == 201, response.content
    issued = response.json()
    assert set(issued) == TOKEN_FIELDS | {"token"}
    assert (issued["role"], issued["name"], issued["user"]) == ("agent", "ci", "acme-person")
    assert issued["token"].startswith(f"mp_{issued['prefix']}_")
    assert response["Location"] == f"/api/v1/tokens/{issued['prefix']}/"
    listed = api("admin").get(f"{API}/tokens/")
    assert issued["prefix"] in {t["prefix"] for t in listed.json()}
    assert issued["token"] not in listed.content.decode()

    status = client_with(issued["token"]).get(f"{API}/status/")
    assert (status.status_code, status.json()["role"]) == (200, "agent")


def test_token_body_is_checked(api: Api, globex: Tenant) -> None:
    admin = api("admin")
    assert "role" in error_of(admin.post(f"{API}/tokens/", {"role": "owner"}), 400, "invalid")["details"]
    assert "role" in error_of(admin.post(f"{API}/tokens/", {}), 400, "invalid")["details"]
    # A member of another organization is not a member of this one.
    error = error_of(admin.post(f"{API}/tokens/", {"role": "agent", "user": "globex-person"}), 422, "invalid")
    assert "not a member of acme" in error["message"]
    assert ApiToken.objects.filter(organization__slug="acme").count() == 5


def test_revoked_token_stops_working(api: Api) -> None:
    issued = api("admin").post(f"{API}/tokens/", {"role": "reader"}).json()
    assert client_with(issued["token"]).get(f"{API}/memories/").status_code == 200

    response = api("admin").delete(f"{API}/tokens/{issued['prefix']}/")

    assert response.status_code == 200
    assert response.json()["revoked_at"] is not None
    refused = client_with(issued["token"]).get(f"{API}/memories/")
    error = error_of(refused, 401, "unauthenticated")
    assert "revoked" in error["message"]
    assert refused["WWW-Authenticate"] == 'Bearer realm="memory-platform"'
    again = api("admin").delete(f"{API}/tokens/{issued['prefix']}/")
    assert (again.status_code, again.json()["revoked_at"]) == (200, response.json()["revoked_at"])


def test_unknown_prefix_is_404(api: Api) -> None:
    error_of(api("admin").delete(f"{API}/tokens/deadbeef/"), 404, "not_found")


def test_below_admin_cannot_manage_tokens(api: Api, acme: Tenant) -> None:
    prefix = acme.raw_tokens["agent"].split("_")[1]
    for role in ("reader", "agent", "curator"):
        client = api(role)
        for response in (
            client.get(f"{API}/tokens/"),
            client.post(f"{API}/tokens/", {"role": "admin"}),
            client.delete(f"{API}/tokens/{prefix}/"),
        ):
            error = error_of(response, 403, "permission_denied")
            assert "needs the admin role" in error["message"]
    assert ApiToken.objects.filter(organization__slug="acme").count() == 5
    assert not ApiToken.objects.filter(revoked_at__isnull=False).exists()
