"""People sign in to the admin with the organization's OpenID Connect provider, and their groups decide
their memberships, at every sign-in.

The provider is `oidc-provider` from npm (an independent implementation), started by the test with
its development login page; the platform is a live server configured for it. A person signs in as
they would in a browser: the platform sends them to the provider, they log in and consent, the
provider sends them back, and the admin opens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.test import Client, override_settings

from identity.models import SingleSignOnMembership
from organizations.models import AuditEvent, Membership, Role, User
from tests.conftest import Tenant
from tests.identity.oidc import CLIENT_ID, CLIENT_SECRET, log_in_and_consent, oidc_provider
from tests.live_server import free_port, start_server, stop

pytestmark = pytest.mark.django_db(transaction=True)

GROUP_ROLES = "memory-curators=acme:curator,memory-readers=acme:reader,globex-team=globex:agent"


@pytest.fixture
def sso(server_env: dict[str, str], tmp_path: Path) -> Iterator[tuple[str, Callable[[dict[str, object]], None]]]:
    """(platform base URL, set_accounts): a live platform signing people in with a live provider."""
    port = free_port()
    env = server_env | {
        "SSO_OIDC_ISSUER": f"http://127.0.0.1:{port}",
        "SSO_OIDC_CLIENT_ID": CLIENT_ID,
        "SSO_OIDC_CLIENT_SECRET": CLIENT_SECRET,
        "SSO_GROUP_ROLES": GROUP_ROLES,
    }
    server, base = start_server(env, tmp_path / "server.log")
    try:
        with oidc_provider(port, f"{base}/oidc/callback/", tmp_path) as provider:
            yield base, provider.set_accounts
    finally:
        stop(server)


@contextmanager
def sign_in(base: str, login: str) -> Iterator[tuple[httpx.Client, httpx.Response]]:
    """(a browser that signed in through the provider as ``login``, the page it landed on)."""
    with httpx.Client(follow_redirects=True, timeout=30) as browser:
        page = browser.get(f"{base}/oidc/authenticate/", params={"next": "/admin/"})
        yield browser, log_in_and_consent(browser, page, login)


def test_groups_give_memberships_just_in_time_and_take_them_away(
    acme: Tenant, globex: Tenant, sso: tuple[str, Callable[[dict[str, object]], None]]
) -> None:
    base, set_accounts = sso
    set_accounts({"grace": {"groups": ["memory-readers", "memory-curators", "unmapped"]}})

    with sign_in(base, "grace") as (browser, admin):
        assert admin.url.path.startswith("/admin/") and "/login/" not in admin.url.path, admin.url
        assert browser.get(f"{base}/admin/memories/memory/").status_code == 200

    grace = User.objects.get(username="grace")
    # The highest role a group gives in each organization; nothing for a group with no mapping.
    assert dict(Membership.objects.filter(user=grace).values_list("organization__slug", "role")) == {
        "acme": Role.CURATOR
    }
    assert grace.is_staff and not grace.has_usable_password()
    event = AuditEvent.objects.get(organization=acme.organization, action="membership.set")
    assert event.actor == "operator (single sign-on)" and event.data["user"] == "grace"

    # Next sign-in: moved from the curators to another organization's team.
    set_accounts({"grace": {"groups": ["globex-team"]}})
    with sign_in(base, "grace"):
        pass
    assert dict(Membership.objects.filter(user=grace).values_list("organization__slug", "role")) == {
        "globex": Role.AGENT
    }

    # Removed from every group: no membership, and the admin no longer opens.
    set_accounts({"grace": {"groups": []}})
    with sign_in(base, "grace") as (browser, _):
        assert "/login/" in browser.get(f"{base}/admin/").url.path
    assert not Membership.objects.filter(user=grace).exists()
    assert not SingleSignOnMembership.objects.filter(user=grace).exists()


def test_a_membership_an_admin_gave_is_left_alone(
    acme: Tenant, sso: tuple[str, Callable[[dict[str, object]], None]]
) -> None:
    base, set_accounts = sso
    assert acme.person.user is not None
    person = acme.person.user.get_username()
    set_accounts({person: {"groups": []}})

    with sign_in(base, person):
        pass

    assert Membership.objects.filter(user__username=person, organization=acme.organization).exists()


@override_settings(
    PASSWORD_LOGIN=False,
    AUTHENTICATION_BACKENDS=[b for b in settings.AUTHENTICATION_BACKENDS if not b.endswith("ModelBackend")],
)
def test_password_sign_in_can_be_turned_off(acme: Tenant) -> None:
    User.objects.create_user("ops", password="long enough password 1", is_staff=True)

    page = Client().get("/admin/login/").content.decode()
    refused = Client().post("/admin/login/", {"username": "ops", "password": "long enough password 1"})

    assert 'name="password"' not in page and "Password sign-in is turned off" in page
    assert refused.status_code == 200 and "_auth_user_id" not in refused.wsgi_request.session
