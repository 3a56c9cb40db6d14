"""An organization's admin, in a real browser: adds a new person, changes a role, removes a
member giving a reason, and reads what happened in the audit events."""

from __future__ import annotations

import pytest

from organizations.models import Membership, User
from tests.admin.conftest import StaffFactory
from tests.browser.conftest import Browser
from tests.conftest import Tenant

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_manages_members(acme: Tenant, make_staff: StaffFactory, browser: Browser) -> None:
    ada = make_staff("ada", acme.organization, "admin")
    leo = make_staff("leo", acme.organization, "reader")

    browser.log_in(ada)
    browser.open("/admin/organizations/membership/add/")
    browser.select("#id_organization", str(acme.organization.pk))
    browser.fill("#id_username", "carla")
    browser.select("#id_role", "curator")
    browser.fill("#id_email", "carla@acme.test")
    browser.find("#id_create").click()
    browser.screenshot("add a member")
    browser.click("input[name=_save]")
    link = next(message for message in browser.messages() if "set-password" in message)
    assert "/accounts/set-password/" in link and "carla" in link.lower()
    assert Membership.objects.get(user__username="carla").role == "curator"
    browser.screenshot("member added with a set-password link")

    browser.open(f"/admin/organizations/membership/{Membership.objects.get(user=leo).pk}/change/")
    browser.select("#id_role", "agent")
    browser.click("input[name=_save]")
    assert Membership.objects.get(user=leo).role == "agent"

    browser.open("/admin/organizations/membership/")
    browser.find(f"#result_list input.action-select[value='{Membership.objects.get(user=leo).pk}']").click()
    browser.select("select[name=action]", "remove_members")
    browser.click("#changelist-form button[name=index]")
    assert "leo leaves acme" in browser.text
    browser.screenshot("remove asks why")
    browser.fill("#id_reason", "moved to another team")
    browser.click("#confirm-remove")
    assert not Membership.objects.filter(user=leo).exists()
    assert User.objects.get(username="leo").is_staff is False

    browser.open("/admin/organizations/auditevent/")
    rows = browser.text
    assert "membership.remove" in rows and "moved to another team" in rows and "reader → agent" in rows
    widths = "const r = document.querySelector('#changelist .results'); return [r.scrollWidth, r.clientWidth]"
    scrolled, shown = browser.driver.execute_script(widths)
    assert scrolled <= shown, (scrolled, shown)
    browser.screenshot("audit events")
