"""Guessing passwords is slowed down: after LOGIN_FAILURE_LIMIT wrong ones for a username from one
address, that username is refused there for a while, the right password included."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from organizations.models import User

pytestmark = pytest.mark.django_db

PASSWORD = "the-right-password-42"
LOGINS = ["/admin/login/?next=/admin/", "/api/auth/login/"]


@pytest.fixture
def carla(db: object) -> User:
    return User.objects.create_user(username="carla", password=PASSWORD, is_staff=True)


@pytest.mark.parametrize("login", LOGINS)
@override_settings(AXES_FAILURE_LIMIT=3)
def test_after_the_limit_even_the_right_password_is_refused(carla: User, login: str) -> None:
    client = Client()
    answers = [client.post(login, {"username": "carla", "password": "guess"}).status_code for _ in range(3)]
    assert answers == [200, 200, 429]  # the form again with its error, then locked at the limit

    locked = client.post(login, {"username": "carla", "password": PASSWORD})

    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session


@override_settings(AXES_FAILURE_LIMIT=3)
def test_a_success_before_the_limit_resets_the_count(carla: User) -> None:
    client = Client()
    for _ in range(2):
        client.post(LOGINS[0], {"username": "carla", "password": "guess"})
    assert client.post(LOGINS[0], {"username": "carla", "password": PASSWORD}).status_code == 302
    client.logout()

    for _ in range(2):
        client.post(LOGINS[0], {"username": "carla", "password": "guess"})
    assert client.post(LOGINS[0], {"username": "carla", "password": PASSWORD}).status_code == 302


@override_settings(AXES_FAILURE_LIMIT=3)
def test_another_username_is_not_locked_by_someone_elses_guesses(carla: User) -> None:
    User.objects.create_user(username="bob", password=PASSWORD, is_staff=True)
    client = Client()
    for _ in range(4):
        client.post(LOGINS[0], {"username": "carla", "password": "guess"})

    assert client.post(LOGINS[0], {"username": "bob", "password": PASSWORD}).status_code == 302
