"""An organization's admin, in a real browser: adds a new person, changes a role, removes a
member giving a reason, and reads what happened in the audit events."""

from __future__ import annotations

import pytest

from organizations.models import Membership, User
from tests.admin.conftest import StaffFactory
from tests.browser.conftest import PASSWORD, Browser
from tests.conftest import Tenant

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_manages_members(acme: Tenant, make_staff: StaffFactory, browser: Browser) -> None:
    ada = make_staff("ada", acme.organization, "admin")
    leo = make_staff("leo", acme.organization, "reader")

    browser.log_in(ada)
    with browser.job("give a new person a curator login (an organization admin, from the dashboard)"):
        browser.follow("Memberships")
        browser.follow("ADD MEMBERSHIP")
        browser.select("#id_organization", str(acme.organization.pk))
        browser.fill("#id_username", "carla")
        browser.select("#id_role", "curator")
        browser.fill("#id_email", "carla@acme.test")
        browser.choose("#id_create")
        browser.screenshot("add a member")
        browser.click("input[name=_save]")
    link = next(message for message in browser.messages() if "set-password" in message)
    assert "/accounts/set-password/" in link and "carla" in link.lower()
    assert Membership.objects.get(user__username="carla").role == "curator"
    browser.screenshot("member added with a set-password link")

    # The new person, not logged in, opens the link: it names their account, shows no admin sidebar.
    admin_cookies = browser.driver.get_cookies()
    browser.driver.delete_all_cookies()
    browser.open(link[link.index("/accounts/set-password/") :].split()[0])
    assert "The password of the account carla" in browser.text
    assert not browser.find_all("#nav-sidebar") and "permission" not in browser.text
    browser.screenshot("the new person sets their password")
    browser.fill("#id_new_password1", "a-Long-pass-42")
    browser.fill("#id_new_password2", "a-Long-pass-42")
    browser.click("form input[type=submit]")
    assert "Password set" in browser.text and not browser.find_all("#nav-sidebar")
    browser.screenshot("password set")
    browser.driver.delete_all_cookies()
    for cookie in admin_cookies:
        browser.driver.add_cookie(cookie)

    browser.open("/admin/organizations/membership/")
    with browser.job("change a member's role, with a reason (from the member list)"):
        browser.follow("leo")
        browser.select("#id_role", "agent")
        browser.fill("#id_reason", "writes the release notes now")
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
    assert "writes the release notes now" in rows
    widths = "const r = document.querySelector('#changelist .results'); return [r.scrollWidth, r.clientWidth]"
    scrolled, shown = browser.driver.execute_script(widths)
    assert scrolled <= shown, (scrolled, shown)
    browser.screenshot("audit events")


def test_a_users_page_lists_their_memberships(acme: Tenant, globex: Tenant, browser: Browser) -> None:
    root = User.objects.create_superuser(username="root", password=PASSWORD)
    both = User.objects.create_user(username="dana", password=PASSWORD, is_staff=True)
    Membership.objects.create(user=both, organization=acme.organization, role="curator")
    Membership.objects.create(user=both, organization=globex.organization, role="reader")

    browser.log_in(root)
    browser.open(f"/admin/organizations/user/{both.pk}/change/")

    rows = browser.text
    assert "acme" in rows and "curator" in rows and "globex" in rows and "reader" in rows
    browser.screenshot("a user's memberships")
