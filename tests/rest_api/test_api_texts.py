"""Prompt and doc texts: every member reads them, only admins reword or reset them."""

from __future__ import annotations

from instructions.models import InstructionKey, InstructionText
from instructions.selectors import default_text
from tests.rest_api.conftest import API, Api, error_of


def test_every_member_lists_the_texts(api: Api) -> None:
    response = api("reader").get(f"{API}/texts/")

    assert response.status_code == 200
    texts = response.json()
    assert [t["key"] for t in texts] == list(InstructionKey.values)
    assert all(set(t) == {"key", "label", "text", "overridden", "updated_at"} for t in texts)
    assert not any(t["overridden"] for t in texts)


def test_admin_rewords_and_resets_a_text(api: Api) -> None:
    url = f"{API}/texts/memory-rules/"

    put = api("admin").put(url, {"text": "Our own memory rules."})

    assert put.status_code == 200, put.content
    assert (put.json()["text"], put.json()["overridden"]) == ("Our own memory rules.", True)
    assert put.json()["updated_at"] is not None
    assert api("reader").get(url).json()["text"] == "Our own memory rules."

    reset = api("admin").delete(url)

    assert reset.status_code == 200
    assert (reset.json()["text"], reset.json()["overridden"]) == (default_text("memory-rules"), False)
    assert not InstructionText.objects.exists()


def test_below_admin_cannot_edit_texts(api: Api) -> None:
    for role in ("reader", "agent", "curator"):
        client = api(role)
        for response in (
            client.put(f"{API}/texts/memory-rules/", {"text": "Mine."}),
            client.delete(f"{API}/texts/memory-rules/"),
        ):
            error = error_of(response, 403, "permission_denied")
            assert "editing prompt and doc texts needs the admin role" in error["message"]
    assert not InstructionText.objects.exists()


def test_text_body_is_checked(api: Api) -> None:
    admin = api("admin")
    assert "text" in error_of(admin.put(f"{API}/texts/memory-rules/", {}), 400, "invalid")["details"]
    assert "text" in error_of(admin.put(f"{API}/texts/memory-rules/", {"text": ""}), 400, "invalid")["details"]
    error_of(admin.put(f"{API}/texts/unknown-key/", {"text": "x"}), 404, "not_found")
    assert not InstructionText.objects.exists()
