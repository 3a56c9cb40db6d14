"""A curator's day, in a real browser: the review queue (verify with a reason, lock, merge a
proposal side by side, dismiss another), a memory's versions compared and reverted, a memory found
by asking a question, and then an agent, over MCP on the same server, refused by the lock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lifecycle.models import ConsolidationProposal, ProposalState
from lifecycle.services import proposal_create
from memories.models import Memory, MemoryVersion
from memories.services import memory_update
from tests.admin.conftest import StaffFactory
from tests.browser.conftest import Browser
from tests.conftest import MemoryFactory, Tenant
from tests.mcp.client import McpClient

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.real_embedder]


def _proposal(tenant: Tenant, keep: Memory, other: Memory) -> ConsolidationProposal:
    proposal, _ = proposal_create(
        organization_id=tenant.organization.pk, kind="merge", memory_ids=[keep.pk, other.pk],
        created_by="consolidation", survivor_id=keep.pk, evidence={"similarity": 0.96},
    )  # fmt: skip
    assert proposal is not None
    return proposal


@pytest.fixture
def agent_over_mcp(live_server: object, acme: Tenant) -> Iterator[McpClient]:
    client = McpClient(f"{live_server.url}/mcp", acme.raw_tokens["agent"])  # type: ignore[attr-defined]
    yield client
    client.close()


def test_a_curator_works_the_queue_then_an_agent_meets_the_lock(
    acme: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, browser: Browser, agent_over_mcp: McpClient
) -> None:
    release = make_memory(
        acme.curator,  # importance 9: above what an agent may set (the write policy)
        title="Release freeze",
        current_content="No releases during the last week of the quarter.",
        importance=9,
        tags=["release", "ops"],
    )
    retries = make_memory(
        title="Retry policy",
        current_content="Clients retry failed calls three times with backoff.",
        importance=7,
        tags=["ops"],
    )
    friday = make_memory(current_content="Never deploy to production on Friday afternoons.", status="active")
    friday_twin = make_memory(current_content="Do not deploy to production on Friday afternoons!", status="active")
    merge = _proposal(acme, friday, friday_twin)
    billing = make_memory(current_content="The billing service owns invoices.", status="active")
    ledger = make_memory(current_content="The ledger service owns invoices.", status="active")
    different = _proposal(acme, billing, ledger)
    carla = make_staff("carla", acme.organization, "curator")

    browser.log_in(carla)
    # The index is the organization's dashboard, its charts drawn on the server.
    charts = browser.find_all("#dashboard svg.chart")
    assert len(charts) == 4 and all(chart.is_displayed() for chart in charts)
    assert "4 waiting for review" in browser.find("#tile-review").text.replace("\n", " ")
    assert browser.find_all("#dashboard svg.chart rect")
    browser.screenshot("dashboard")
    browser.click("#header a.review-waiting")
    assert browser.path == "/admin/review/"
    first = browser.find("section.review-item.next")
    assert first.get_attribute("id") == f"draft-{release.pk}"
    assert "Possible duplicates" in browser.text or "No similar memory" in browser.text
    browser.screenshot("review queue")

    # Verify the first draft, giving a reason; the next item is then on top.
    with browser.job("approve (verify) a draft, with a reason"):
        browser.fill("section.review-item.next textarea[name=reason]", "matches the release runbook")
        browser.click("section.review-item.next button[value=verify]")
    assert any("Verified “Release freeze”" in message for message in browser.messages()), browser.messages()
    assert browser.find("section.review-item.next").get_attribute("id") == f"draft-{retries.pk}"
    browser.screenshot("verified, next item on top")
    version = MemoryVersion.objects.get(memory=release, version=2)
    assert (version.snapshot["status"], version.reason) == ("verified", "matches the release runbook")

    # Lock the next one.
    with browser.job("lock a draft, with a reason"):
        browser.fill("section.review-item.next textarea[name=reason]", "agreed with the platform team")
        browser.click("section.review-item.next button[value=lock]")
    retries.refresh_from_db()
    assert retries.status == "locked"

    # Merge a proposal side by side, keeping the twin, after reading the differences.
    with browser.job("merge a proposal side by side, choosing the survivor, with a reason"):
        browser.click(f"#proposal-{merge.pk} a.button")
        assert browser.find_all("ins.diff"), "the differences are marked"
        browser.screenshot("proposal side by side")
        browser.choose(f"input[name=survivor][value='{friday_twin.pk}']")
        browser.fill("#id_reason", "the same rule, said twice")
        browser.click("#apply")
    assert browser.path == "/admin/review/"
    merge.refresh_from_db()
    friday.refresh_from_db()
    assert (merge.state, friday.superseded_by_id) == (ProposalState.APPLIED, friday_twin.pk)

    # Dismiss the other: different services.
    with browser.job("dismiss a proposal, with a reason"):
        browser.click(f"#proposal-{different.pk} a.button")
        browser.fill("#id_reason", "billing and ledger are different services")
        browser.click("#dismiss")
    different.refresh_from_db()
    assert different.state == ProposalState.DISMISSED
    assert browser.find_all("#queue-empty")
    browser.screenshot("queue done")

    # A memory an agent changed: compare its versions, then revert.
    memory_update(
        principal=acme.agent, memory_id=billing.pk, data={"current_content": "The billing service owns refunds."}
    )
    browser.open(f"/admin/memories/memory/{billing.pk}/change/")
    browser.screenshot("memory page")
    with browser.job("compare any two versions of a memory (from its page)"):
        browser.click("a.historylink")
        browser.screenshot("history of a memory")
        browser.choose("input[name=from][value='1']")
        browser.choose("input[name=to][value='2']")
        browser.click("#compare-versions")
    content = "#changes tr.change-current_content"
    assert [element.text for element in browser.find_all(f"{content} del.diff")] == ["invoices"]
    assert [element.text for element in browser.find_all(f"{content} ins.diff")] == ["refunds"]
    browser.screenshot("versions compared word by word")
    with browser.job("revert a memory to an earlier version, with a reason (from the comparison)"):
        browser.follow("History")
        browser.click("#version-1 a.button")
        browser.screenshot("revert asks why")
        browser.fill("#id_reason", "refunds belong to the ledger")
        browser.click("#confirm-revert")
    assert any("reads as version 1 again" in message for message in browser.messages())
    billing.refresh_from_db()
    assert (billing.current_content, billing.version) == ("The billing service owns invoices.", 3)

    # A version reads whole.
    browser.open(f"/admin/memories/memory/{billing.pk}/versions/2/")
    assert "The billing service owns refunds." in browser.text
    browser.screenshot("one version whole")

    # Find a memory by asking a question.
    browser.open("/admin/")
    with browser.job("find a memory by asking a question (from the dashboard)"):
        browser.follow("Memories")
        browser.fill("#searchbar", "can I ship on friday afternoon?")
        browser.click("#changelist-search [type=submit]")
    top = browser.find("#result_list tbody tr:first-child").text
    assert "Friday" in top, top
    browser.screenshot("memories found by a question")
    # The list fits a 1280-pixel window: no scrolling sideways, neither the page nor the table.
    assert browser.driver.execute_script("return document.documentElement.scrollWidth") <= 1280
    widths = "const r = document.querySelector('#changelist .results'); return [r.scrollWidth, r.clientWidth]"
    scrolled, shown = browser.driver.execute_script(widths)
    assert scrolled <= shown, (scrolled, shown)

    # Deprecate several at once: a page lists them with what changes, and asks why, before anything changes.
    tips = [make_memory(current_content=f"Tip {n}: squash commits before merging.", status="active") for n in (1, 2)]
    with browser.job("deprecate several memories at once, with a reason (from the memory list)"):
        browser.fill("#searchbar", "squash")
        browser.select("#changelist-search select[name=mode]", "words")
        browser.click("#changelist-search [type=submit]")
        for tip in tips:
            browser.choose(f"#result_list input.action-select[value='{tip.pk}']")
        browser.select("select[name=action]", "deprecate_selected")
        browser.click("#changelist-form button[name=index]")
        listed = browser.text
        assert "Tip 1" in listed and "Tip 2" in listed and "active → deprecated" in listed.replace("\n", " ")
        assert all(Memory.objects.get(pk=tip.pk).status == "active" for tip in tips)  # nothing yet
        browser.screenshot("bulk deprecate lists the memories and asks why")
        browser.fill("#id_reason", "we merge with rebase now")
        browser.click("#confirm-decision")
    assert all(Memory.objects.get(pk=tip.pk).status == "deprecated" for tip in tips)
    assert MemoryVersion.objects.get(memory=tips[0], version=2).reason == "we merge with rebase now"

    # One memory from its page: the button asks why first.
    with browser.job("reactivate a deprecated memory from its page, with a reason"):
        browser.open(f"/admin/memories/memory/{tips[0].pk}/change/")
        browser.click("#decide-reactivate")
        browser.screenshot("a memory's button asks why")
        browser.fill("#id_reason", "still true for the legacy repository")
        browser.click("#confirm-decision")
    assert Memory.objects.get(pk=tips[0].pk).status == "active"

    # The locked memory, from its page: the banner says who and why.
    browser.open(f"/admin/memories/memory/{retries.pk}/change/")
    assert "agreed with the platform team" in browser.find("#status-banner").text
    browser.screenshot("locked memory banner")

    # An agent over MCP, on the same server, cannot change it.
    refusal = agent_over_mcp.error("memory-update", {"id": str(retries.pk), "current_content": "Retry forever."})
    assert "locked" in refusal
    retries.refresh_from_db()
    assert retries.current_content == "Clients retry failed calls three times with backoff."


def test_view_site_opens_the_api_docs_which_run_under_the_content_security_policy(
    acme: Tenant, make_staff: StaffFactory, browser: Browser
) -> None:
    browser.log_in(make_staff("carla", acme.organization, "curator"))

    browser.follow("VIEW SITE")

    assert browser.path == "/api/docs/"
    # Swagger UI draws the page with scripts from this server only: the CSP lets it run.
    title = browser.find(".swagger-ui .info .title")
    assert "Memory Platform API" in title.text
    browser.screenshot("api docs")
