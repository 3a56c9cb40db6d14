"""What a curator reads, in a real browser, says what it is and fits the window: whole titles in the
memory list, a search by meaning in its own order with its scores, a proposal list whose columns
are readable, a dashboard in words and numbers, revert buttons on one line, a contradiction's own
buttons, and a memory waiting once in the queue."""

from __future__ import annotations

import pytest

from lifecycle.models import ConsolidationProposal, LifecycleRun
from lifecycle.services import proposal_create
from memories.models import Memory
from memories.services import memory_update
from tests.admin.conftest import StaffFactory
from tests.browser.conftest import Browser
from tests.conftest import MemoryFactory, Tenant

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.real_embedder]

WINDOW_WIDTH = 1280
# How many lines an element's text takes on screen (one rectangle per line box).
LINES = "const r = document.createRange(); r.selectNodeContents(arguments[0]); return r.getClientRects().length"
# Whether an element's content is cut (wider than the element shows).
CLIPPED = "const e = arguments[0]; return e.scrollWidth > e.clientWidth + 1"
RESULTS_FIT = "const r = document.querySelector('#changelist .results'); return r.scrollWidth <= r.clientWidth"


def _proposal(tenant: Tenant, kind: str, *memories: Memory) -> ConsolidationProposal:
    proposal, _ = proposal_create(
        organization_id=tenant.organization.pk, kind=kind, memory_ids=[m.pk for m in memories],
        created_by="consolidation", survivor_id=memories[0].pk, evidence={"similarity": 0.91},
    )  # fmt: skip
    assert proposal is not None
    return proposal


def _fits(browser: Browser) -> None:
    assert browser.driver.execute_script("return document.documentElement.scrollWidth") <= WINDOW_WIDTH
    assert browser.driver.execute_script(RESULTS_FIT)


def test_a_curator_reads_lists_that_say_what_they_are(
    acme: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, browser: Browser
) -> None:
    # Two rules that differ only at the end of their long titles.
    long_titles = [
        "Production deploys on Friday afternoons need approval from the on-call lead and the release manager",
        "Production deploys on Friday afternoons need approval from the on-call lead and the product owner",
    ]
    twins = [
        make_memory(title=title, current_content=f"{title}.", importance=5, status="active") for title in long_titles
    ]
    make_memory(title="Staging deploys", current_content="Deploys to staging may happen on any day.", importance=6)
    verified = make_memory(
        acme.curator, title="Timeouts", current_content="The API timeout is 30 seconds.", status="verified"
    )
    draft = make_memory(title="Longer timeouts", current_content="The API timeout is 60 seconds.")
    contradiction = _proposal(acme, "contradiction", verified, draft)
    decided = _proposal(acme, "merge", *twins)
    LifecycleRun.objects.create(
        organization=acme.organization, kind="consolidation", status="completed",
        counts={"examined": 5, "auto_merged": 0, "proposals": {"merge": 1, "contradiction": 1}},
    )  # fmt: skip
    carla = make_staff("carla", acme.organization, "curator")
    browser.log_in(carla)

    # The dashboard: run counts in words, freshness as numbers from day one.
    runs = browser.find("#dashboard ul.runs").text
    assert "examined 5, auto merged 0, proposals: 1 merge, 1 contradiction" in runs, runs
    least_fresh = browser.find("#dashboard ul.least-fresh").text
    assert "freshness 1.00" in least_fresh and "never scored" not in least_fresh, least_fresh
    browser.screenshot("dashboard")

    # The memory list: whole titles, not cut, and importance shown.
    browser.open("/admin/memories/memory/")
    titles = {element.text: element for element in browser.find_all("#result_list .memory-title")}
    for title in long_titles:
        assert title in titles, list(titles)
        assert not browser.driver.execute_script(CLIPPED, titles[title]), title
    importances = [element.text for element in browser.find_all("#result_list td.field-importance_shown .importance")]
    assert "5" in importances and "6" in importances
    _fits(browser)
    browser.screenshot("memory list with whole titles")

    # By meaning: the search's order, its scores, and no column claiming to sort the list.
    browser.fill("#searchbar", "who approves a deploy on a friday afternoon?")
    browser.click("#changelist-search [type=submit]")
    scores = [float(element.text) for element in browser.find_all("#result_list td.field-match")]
    assert len(scores) >= 2 and scores == sorted(scores, reverse=True), scores
    assert not browser.find_all("#result_list thead th.sorted")
    _fits(browser)
    browser.screenshot("memory list by meaning with scores")

    # The queue: the draft in the contradiction waits once, inside it.
    browser.open("/admin/review/")
    assert not browser.find_all(f"#draft-{draft.pk}")
    assert "its own review waits for this proposal's decision" in browser.find(f"#proposal-{contradiction.pk}").text
    browser.screenshot("a draft waits once, inside its proposal")

    # A contradiction's own buttons; applying says what was kept and what went.
    browser.click(f"#proposal-{contradiction.pk} a.button")
    assert browser.find("#apply").text == "Keep the chosen one"
    assert browser.find("#dismiss").text == "Dismiss (they do not contradict)"
    assert "reference: curated" in browser.text
    browser.screenshot("contradiction side by side")
    browser.fill("#id_reason", "the timeout was raised last week")
    browser.click("#apply")
    assert "Kept “Timeouts”; superseded by it: “Longer timeouts”. Next item below." in browser.messages()

    # Decide the merge, then read the proposal list: every column readable, nothing cut.
    browser.click(f"#proposal-{decided.pk} a.button")
    browser.fill("#id_reason", "the release manager and the product owner are different people")
    browser.click("#dismiss")
    browser.open("/admin/lifecycle/consolidationproposal/")
    _fits(browser)
    row = browser.find(f"#result_list input.action-select[value='{decided.pk}']").find_element(
        "xpath", "./ancestor::tr"
    )
    outcome = row.find_element("css selector", "td.field-outcome")
    assert "Dismissed" in outcome.text and "by user carla" in outcome.text and "different people" in outcome.text
    assert outcome.rect["x"] + outcome.rect["width"] <= WINDOW_WIDTH
    # The proposal's titles each on at most two lines, not a word per line.
    for member in row.find_elements("css selector", ".proposal-members div"):
        assert browser.driver.execute_script(LINES, member) <= 2, member.text
    browser.screenshot("proposal list")

    # A memory's history: each revert button on one line.
    staging = Memory.objects.get(title="Staging deploys")
    for n in (1, 2):
        memory_update(principal=acme.agent, memory_id=staging.pk, data={"current_content": f"Staging, take {n}."})
    browser.open(f"/admin/memories/memory/{staging.pk}/history/")
    buttons = browser.find_all("#versions td.revert a.button")
    assert len(buttons) == 2
    for button in buttons:
        assert browser.driver.execute_script(LINES, button) == 1, button.text
    browser.screenshot("history with one-line revert buttons")
