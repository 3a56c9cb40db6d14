"""Admin fixtures: staff people with a role in an organization, and a form-posting helper."""

from __future__ import annotations

from collections.abc import Callable
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any

import pytest
from django.test import Client

from organizations.models import Membership, Organization, User

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as TestResponse

StaffFactory = Callable[..., User]


@pytest.fixture
def make_staff(db: Any) -> StaffFactory:
    """A staff user who is a member of ``organization`` with ``role`` (no membership if None)."""

    def make(username: str, organization: Organization | None = None, role: str | None = None) -> User:
        user = User.objects.create_user(username=username, password="unused-password-1", is_staff=True)
        if organization is not None and role is not None:
            Membership.objects.create(user=user, organization=organization, role=role)
        return user

    return make


@pytest.fixture
def login(client: Client) -> Callable[[User], Client]:
    def log_in(user: User) -> Client:
        client.force_login(user)
        return client

    return log_in


@pytest.fixture
def client_as(client: Client, make_staff: StaffFactory) -> Callable[..., Client]:
    """The test client, logged in as a new staff user (see ``make_staff``)."""

    def log_in(username: str, organization: Organization | None = None, role: str | None = None) -> Client:
        client.force_login(make_staff(username, organization, role))
        return client

    return log_in


class _FormScraper(HTMLParser):
    """Collects what a browser would submit from the page's main form."""

    def __init__(self, form_id: str) -> None:
        super().__init__()
        self.form_id = form_id
        self.inside = False
        self.data: dict[str, Any] = {}
        self._select: str | None = None
        self._select_first: str | None = None
        self._select_chosen = False
        self._textarea: str | None = None

    def _put(self, name: str, value: str) -> None:
        if name in self.data:
            existing = self.data[name]
            self.data[name] = [*existing, value] if isinstance(existing, list) else [existing, value]
        else:
            self.data[name] = value

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {key: value or "" for key, value in attrs}
        if tag == "form" and attributes.get("id") == self.form_id:
            self.inside = True
        if not self.inside:
            return
        name = attributes.get("name")
        if tag == "input" and name:
            kind = attributes.get("type", "text")
            if kind in {"submit", "button", "file", "image"}:
                return
            if kind in {"checkbox", "radio"} and "checked" not in attributes:
                return
            self._put(name, attributes.get("value", "on" if kind == "checkbox" else ""))
        elif tag == "select" and name:
            self._select, self._select_first, self._select_chosen = name, None, False
        elif tag == "option" and self._select:
            value = attributes.get("value", "")
            if self._select_first is None:
                self._select_first = value
            if "selected" in attributes:
                self._put(self._select, value)
                self._select_chosen = True
        elif tag == "textarea" and name:
            self._textarea = name
            self.data[name] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self.inside:
            self.inside = False
        elif tag == "select" and self._select:
            if not self._select_chosen and self._select_first is not None:
                self._put(self._select, self._select_first)
            self._select = None
        elif tag == "textarea":
            self._textarea = None

    def handle_data(self, data: str) -> None:
        if self._textarea:
            # Browsers drop the one newline that follows <textarea>.
            self.data[self._textarea] += data.removeprefix("\n") if not self.data[self._textarea] else data


def form_data(response: TestResponse, form_id: str) -> dict[str, Any]:
    """The fields of the form ``form_id`` on a rendered page, as a browser would post them."""
    scraper = _FormScraper(form_id)
    scraper.feed(response.content.decode())
    assert scraper.data, f"no form #{form_id} on the page"
    return scraper.data


def messages_of(response: TestResponse) -> list[str]:
    """The messages shown on a rendered admin page (follow the redirect to get one)."""
    assert response.status_code == 200, response.status_code
    return [str(message) for message in response.context["messages"]]
