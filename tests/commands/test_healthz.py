from __future__ import annotations

import pytest
from django.test import Client


@pytest.mark.django_db
def test_healthz_reports_the_database_and_pgvector(client: Client) -> None:
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert int(body["database"]["version"].split(".")[0]) >= 15
    assert body["pgvector"]["ok"] is True
    major, minor, *_ = body["pgvector"]["version"].split(".")
    assert (int(major), int(minor)) >= (0, 5)


@pytest.mark.django_db
def test_healthz_needs_no_login(client: Client) -> None:
    assert client.get("/healthz").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_healthz_only_answers_get_and_head(client: Client, method: str) -> None:
    response = getattr(client, method)("/healthz")

    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"


@pytest.mark.django_db
def test_healthz_answers_head_for_load_balancers(client: Client) -> None:
    assert client.head("/healthz").status_code == 200
