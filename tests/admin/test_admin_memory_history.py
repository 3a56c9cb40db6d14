"""A memory's history in the admin: every version whole, a word diff between any two, revert as a
new version; and the buttons of a memory's page, each asking why first."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from memories.decisions import memory_lock
from memories.models import Memory, MemoryVersion
from memories.services import memory_update
from organizations.models import AuditEvent, Role, User
from tests.admin.conftest import StaffFactory, messages_of
from tests.conftest import MemoryFactory, Tenant

Login = Callable[[User], Client]


@pytest.fixture
def curator_client(acme: Tenant, make_staff: StaffFactory, login: Login) -> Client:
    return login(make_staff("carol", acme.organization, Role.CURATOR))


@pytest.fixture
def edited(acme: Tenant, make_memory: MemoryFactory) -> Memory:
    """Three versions: created, its text and tags edited, then locked."""
    memory = make_memory(title="Deploy window", current_content="Deploys happen on Tuesday mornings.", tags=["ops"])
    memory_update(
        principal=acme.agent,
        memory_id=memory.pk,
        data={"current_content": "Deploys happen on Thursday mornings after the review.", "tags": ["ops", "deploy"]},
    )
    return memory_lock(principal=acme.curator, memory_id=memory.pk, reason="agreed with the SRE team")


def test_the_history_lists_every_version_with_who_and_why(edited: Memory, curator_client: Client) -> None:
    response = curator_client.get(reverse("admin:memories_memory_history", args=[edited.pk]))

    assert response.status_code == 200
    rows = [(v.version, v.change, v.reason) for v in response.context["versions"]]
    assert rows == [(3, "status", "agreed with the SRE team"), (2, "update", ""), (1, "create", "")]
    page = response.content.decode()
    assert reverse("admin:memories_memory_revert", args=[edited.pk, 1]) in page
    assert (response.context["compare_from"], response.context["compare_to"]) == (2, 3)
    # Who, by name: the agent token's, not only its prefix.
    assert f"<td>acme-curator ({edited.versions.get(version=3).actor.removeprefix('token ')})</td>" in page


def test_a_version_reads_whole(edited: Memory, curator_client: Client) -> None:
    response = curator_client.get(reverse("admin:memories_memory_version", args=[edited.pk, 1]))

    fields = dict(response.context["fields"])
    assert fields["current_content"] == "Deploys happen on Tuesday mornings."
    assert (fields["status"], fields["tags"]) == ("draft", "ops")


def test_compare_shows_every_changed_field_word_by_word(edited: Memory, curator_client: Client) -> None:
    response = curator_client.get(reverse("admin:memories_memory_compare", args=[edited.pk]), {"from": 1, "to": 3})

    changes = {change.field: change for change in response.context["changes"]}
    assert set(changes) == {"current_content", "tags", "status"}
    assert (changes["status"].old, changes["status"].new) == ("draft", "locked")
    content = changes["current_content"].ops
    assert ("delete", "Tuesday") in content and ("insert", "Thursday") in content
    assert ("equal", "Deploys happen on ") in content
    page = response.content.decode()
    assert '<del class="diff">Tuesday</del>' in page and '<ins class="diff">Thursday</ins>' in page


def test_compare_by_default_shows_the_last_change(edited: Memory, curator_client: Client) -> None:
    response = curator_client.get(reverse("admin:memories_memory_compare", args=[edited.pk]))

    assert (response.context["older"].version, response.context["newer"].version) == (2, 3)
    assert [change.field for change in response.context["changes"]] == ["status"]


def test_a_missing_version_is_not_found(edited: Memory, curator_client: Client) -> None:
    for url in (
        reverse("admin:memories_memory_version", args=[edited.pk, 9]),
        reverse("admin:memories_memory_version", args=[edited.pk, "x"]),
        reverse("admin:memories_memory_compare", args=[edited.pk]) + "?from=0",
    ):
        assert curator_client.get(url).status_code == 404, url


def test_revert_shows_what_changes_then_writes_a_new_version(edited: Memory, curator_client: Client) -> None:
    url = reverse("admin:memories_memory_revert", args=[edited.pk, 1])

    page = curator_client.get(url)
    assert {change.field for change in page.context["changes"]} == {"current_content", "tags", "status"}
    assert MemoryVersion.objects.filter(memory=edited).count() == 3

    refused = curator_client.post(url, {"reason": ""})
    assert "Say why" in refused.content.decode()
    done = curator_client.post(url, {"reason": "Thursday was never agreed"}, follow=True)

    assert messages_of(done) == ["“Deploy window” reads as version 1 again (new version 4)."]
    edited.refresh_from_db()
    assert (edited.version, edited.status, edited.tags) == (4, "draft", ["ops"])
    assert edited.current_content == "Deploys happen on Tuesday mornings."
    latest = MemoryVersion.objects.get(memory=edited, version=4)
    assert (latest.change, latest.reason) == ("revert", "back to version 1: Thursday was never agreed")
    assert AuditEvent.objects.filter(action="memory.revert", target_id=str(edited.pk)).count() == 1
    # The versions in between are still there, as they were.
    assert MemoryVersion.objects.get(memory=edited, version=3).snapshot["status"] == "locked"


def test_a_reader_sees_the_history_but_cannot_revert(
    acme: Tenant, edited: Memory, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("rita", acme.organization, Role.READER))

    history = client.get(reverse("admin:memories_memory_history", args=[edited.pk]))
    assert history.status_code == 200
    assert "Revert to" not in history.content.decode()
    response = client.post(reverse("admin:memories_memory_revert", args=[edited.pk, 1]), {"reason": "mine"})

    assert response.status_code == 302
    edited.refresh_from_db()
    assert edited.version == 3


def test_the_locked_banner_says_who_when_and_why(edited: Memory, curator_client: Client) -> None:
    response = curator_client.get(reverse("admin:memories_memory_change", args=[edited.pk]))

    page = response.content.decode()
    assert 'id="status-banner"' in page
    assert "Locked</strong> by acme-curator (mp_" in page and "agreed with the SRE team" in page
    buttons = [decision.name for decision in response.context["decisions"]]
    assert buttons == ["unlock", "deprecate", "delete"]


def test_a_page_button_asks_why_then_decides(acme: Tenant, make_memory: MemoryFactory, curator_client: Client) -> None:
    memory = make_memory(title="Ruff is the linter")
    url = reverse("admin:memories_memory_decide", args=[memory.pk, "lock"])

    page = curator_client.get(url)
    assert [(row.before, row.after) for row in page.context["rows"]] == [("draft", "locked")]
    memory.refresh_from_db()
    assert memory.version == 1

    done = curator_client.post(url, {"post": "yes", "reason": "the canonical rule"}, follow=True)

    assert done.redirect_chain[-1][0] == reverse("admin:memories_memory_change", args=[memory.pk])
    memory.refresh_from_db()
    assert (memory.status, memory.version) == ("locked", 2)
    assert "the canonical rule" in done.content.decode()  # the banner


def test_an_unknown_decision_changes_nothing(make_memory: MemoryFactory, curator_client: Client) -> None:
    memory = make_memory()

    response = curator_client.post(
        reverse("admin:memories_memory_decide", args=[memory.pk, "obliterate"]), {"post": "yes", "reason": "x"}
    )

    assert response.status_code == 302
    memory.refresh_from_db()
    assert memory.version == 1


def test_another_organizations_curator_reaches_none_of_these_pages(
    globex: Tenant, edited: Memory, make_staff: StaffFactory, login: Login
) -> None:
    client = login(make_staff("gary", globex.organization, Role.CURATOR))
    for url in (
        reverse("admin:memories_memory_history", args=[edited.pk]),
        reverse("admin:memories_memory_version", args=[edited.pk, 1]),
        reverse("admin:memories_memory_compare", args=[edited.pk]),
        reverse("admin:memories_memory_revert", args=[edited.pk, 1]),
        reverse("admin:memories_memory_decide", args=[edited.pk, "unlock"]),
    ):
        get = client.get(url)
        post = client.post(url, {"post": "yes", "reason": "mine now"})
        # Django's answer for an object that does not exist: back to the index.
        assert (get.status_code, post.status_code) == (302, 302), url
        assert get["Location"] == reverse("admin:index")
    edited.refresh_from_db()
    assert (edited.version, edited.status) == (3, "locked")
