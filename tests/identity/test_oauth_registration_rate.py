"""Anyone may register an OAuth client (MCP hosts do it on their own), so registrations are counted per address."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings
from oauth2_provider.models import get_application_model

from tests.identity.conftest import REDIRECT_URI

pytestmark = pytest.mark.django_db


def _register(address: str) -> object:
    return Client(REMOTE_ADDR=address).post(
        "/oauth/register/",
        data={"client_name": "Host", "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"},
        content_type="application/json",
    )


@override_settings(OAUTH_REGISTRATION_RATE="2/hour")
def test_registrations_over_the_rate_are_refused_per_address() -> None:
    answers = [_register("203.0.113.7") for _ in range(3)]
    elsewhere = _register("198.51.100.4")

    assert [answer.status_code for answer in answers] == [201, 201, 429]  # type: ignore[attr-defined]
    refused = answers[2]
    assert refused.json()["error"] == "too_many_requests" and int(refused["Retry-After"]) > 0  # type: ignore[attr-defined,index]
    assert elsewhere.status_code == 201  # type: ignore[attr-defined]
    assert get_application_model().objects.count() == 3
