"""Another organization's curator, in a real browser, finds nothing of acme: not in the lists, not
by searching, and not by typing the address of an acme memory or proposal."""

from __future__ import annotations

import pytest

from lifecycle.services import proposal_create
from memories.services import memory_create
from tests.admin.conftest import StaffFactory
from tests.browser.conftest import Browser
from tests.conftest import MemoryFactory, Tenant

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SECRET = "Acme's payroll runs on the third Thursday"


def test_an_outsider_curator_sees_none_of_acme(
    acme: Tenant, globex: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, browser: Browser
) -> None:
    secret = make_memory(title=SECRET, current_content=f"{SECRET} of every month.")
    twin = make_memory(title="Payroll timing", current_content=f"{SECRET}, every month.")
    proposal, _ = proposal_create(
        organization_id=acme.organization.pk, kind="merge", memory_ids=[secret.pk, twin.pk], created_by="tests"
    )
    assert proposal is not None
    memory_create(
        principal=globex.agent,
        data={"scope_type": "organization", "memory_type": "fact", "title": "Globex ships on Mondays",
              "current_content": "Globex ships on Mondays."},
    )  # fmt: skip
    gary = make_staff("gary", globex.organization, "curator")

    browser.log_in(gary)
    browser.screenshot("outsider index")
    assert "acme" not in browser.text.lower()
    # Asking the dashboard for acme's numbers gives globex's.
    browser.open("/admin/?organization=acme")
    assert "memories in globex" in browser.find("#tile-memories").text.replace("\n", " ")
    assert "acme" not in browser.text.lower() and "payroll" not in browser.text.lower()

    browser.follow("Memories")
    assert "Globex ships on Mondays" in browser.text
    assert "payroll" not in browser.text.lower()
    browser.screenshot("outsider memory list")

    # Nothing of globex's matches payroll, by meaning or by words; acme's payroll memory never shows.
    for mode, rows in (("meaning", 0), ("words", 0)):
        browser.fill("#searchbar", "payroll")
        browser.select("#search-mode", mode)
        browser.click("#changelist-search [type=submit]")
        assert len(browser.find_all("#result_list tbody tr")) == rows, mode
        assert "third thursday" not in browser.text.lower()
        browser.screenshot(f"outsider search by {mode} finds nothing of acme")

    browser.open("/admin/review/")
    assert "payroll" not in browser.text.lower()
    assert "Globex ships on Mondays" in browser.text
    browser.screenshot("outsider review queue")

    browser.open("/admin/lifecycle/consolidationproposal/")
    assert "payroll" not in browser.text.lower()
    browser.screenshot("outsider proposals")

    # Typed addresses read as missing: back to the index, nothing of the memory on the way.
    for address in (
        f"/admin/memories/memory/{secret.pk}/change/",
        f"/admin/memories/memory/{secret.pk}/history/",
        f"/admin/lifecycle/consolidationproposal/{proposal.pk}/change/",
        f"/admin/memories/memory/{secret.pk}/versions/1/",
        f"/admin/memories/memory/{secret.pk}/versions/compare/",
        f"/admin/memories/memory/{secret.pk}/decide/lock/",
    ):
        browser.open(address)
        assert browser.path in ("/admin/", "/admin/?"), (address, browser.path)
        assert "payroll" not in browser.driver.page_source.lower(), address
    browser.open(f"/admin/review/proposal/{proposal.pk}/")
    assert "payroll" not in browser.driver.page_source.lower()
    assert "Not Found" in browser.text
    browser.screenshot("outsider typed an acme address")
