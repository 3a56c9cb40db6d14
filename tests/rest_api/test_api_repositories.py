"""Repositories: list, create (writers), retrieve."""

from __future__ import annotations

from organizations.models import Repository
from tests.rest_api.conftest import API, Api, World, error_of


def test_reader_lists_and_retrieves_repositories(api: Api, world: World) -> None:
    listed = api("reader").get(f"{API}/repositories/")
    one = api("reader").get(f"{API}/repositories/payments-api/")

    assert listed.status_code == 200
    assert [r["slug"] for r in listed.json()] == ["payments-api"]
    assert (one.status_code, one.json()["name"]) == (200, "Payments API")
    assert set(one.json()) == {"slug", "name", "created_at"}


def test_unknown_repository_is_404(api: Api, world: World) -> None:
    error = error_of(api("reader").get(f"{API}/repositories/web/"), 404, "not_found")
    assert "repository 'web' not found" in error["message"]


def test_agent_creates_a_repository_once(api: Api) -> None:
    first = api("agent").post(f"{API}/repositories/", {"slug": "billing", "name": "Billing"})
    again = api("agent").post(f"{API}/repositories/", {"slug": "billing"})

    assert (first.status_code, first.json()["slug"], first.json()["name"]) == (201, "billing", "Billing")
    assert (again.status_code, again.json()["name"]) == (200, "Billing")
    assert Repository.objects.filter(slug="billing").count() == 1


def test_reader_cannot_create_a_repository(api: Api) -> None:
    error_of(api("reader").post(f"{API}/repositories/", {"slug": "billing"}), 403, "permission_denied")
    assert not Repository.objects.exists()


def test_slug_must_match_the_documented_pattern(api: Api) -> None:
    for slug in ("Payments_API", "-edge", "x" * 65):
        error = error_of(api("agent").post(f"{API}/repositories/", {"slug": slug}), 400, "invalid")
        assert "slug" in error["details"], slug
    assert not Repository.objects.exists()
