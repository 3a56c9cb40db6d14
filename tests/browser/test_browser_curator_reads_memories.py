"""A curator, in a real browser, logs in, finds a memory in the list by a word and reads its versions."""

from __future__ import annotations

import pytest

from memories.services import memory_update
from tests.admin.conftest import StaffFactory
from tests.browser.conftest import Browser
from tests.conftest import MemoryFactory, Tenant

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_curator_searches_the_memory_list_and_reads_a_memorys_versions(
    acme: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, browser: Browser
) -> None:
    rule = make_memory(
        title="Release freeze on Fridays",
        memory_type="business_rule",
        current_content="Do not release to production after Friday noon; wait for Monday.",
    )
    memory_update(
        principal=acme.curator,
        memory_id=rule.pk,
        data={"current_content": "Do not release to production after Friday noon; hotfixes need two approvals."},
        reason="hotfixes were missing",
    )
    make_memory(title="Invoices are numbered per year", current_content="Invoices are numbered per year, from 1.")
    carla = make_staff("carla", acme.organization, "curator")

    browser.log_in(carla)
    browser.screenshot("admin index")

    browser.follow("Memories")
    assert browser.path.startswith("/admin/memories/memory/")
    listed = browser.text
    assert "Release freeze on Fridays" in listed and "Invoices are numbered per year" in listed
    browser.screenshot("memory list")

    browser.fill("#searchbar", "hotfixes")
    browser.select("#search-mode", "words")
    browser.click("#changelist-search [type=submit]")
    titles = [title.text for title in browser.find_all("#result_list tbody .memory-title")]
    assert titles == ["Release freeze on Fridays"]
    browser.screenshot("memory list searched by words")

    browser.click("#result_list tbody .memory-title")
    assert browser.path.startswith(f"/admin/memories/memory/{rule.pk}/change/")
    assert "hotfixes need two approvals" in (browser.find("#id_current_content").get_attribute("value") or "")
    # Both versions are listed on the memory's page, the newest with the reason it was written for.
    versions = [group.text for group in browser.find_all(".inline-group") if "versions" in group.text.lower()]
    assert len(versions) == 1, versions
    assert "create" in versions[0] and "update" in versions[0] and "hotfixes were missing" in versions[0]
    browser.screenshot("memory with its versions")
