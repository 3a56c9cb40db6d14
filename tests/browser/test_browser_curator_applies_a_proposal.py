"""A curator, in a real browser, applies a consolidation proposal: action, reason page, done."""

from __future__ import annotations

import pytest

from lifecycle.consolidation import consolidation_run
from lifecycle.models import ConsolidationProposal, ProposalState
from memories.models import Memory, MemoryVersion
from tests.admin.conftest import StaffFactory
from tests.browser.conftest import Browser
from tests.conftest import MemoryFactory, Tenant

# The proposal comes from the consolidation worker's own duplicate detection, which is retrieval.
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.real_embedder]


def test_a_curator_applies_a_proposal_giving_a_reason(
    acme: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, browser: Browser
) -> None:
    make_memory(current_content="Never deploy to production on Friday afternoons.")
    make_memory(current_content="Do not deploy to production on a Friday afternoon.")
    consolidation_run(organization=acme.organization)
    proposal = ConsolidationProposal.objects.get(state=ProposalState.OPEN)
    carla = make_staff("carla", acme.organization, "curator")

    browser.log_in(carla)
    browser.follow("Consolidation proposals")
    assert "Friday" in browser.text
    browser.screenshot("open proposals")

    browser.find(f"#result_list input.action-select[value='{proposal.pk}']").click()
    browser.select("select[name=action]", "apply_proposals")
    browser.click("#changelist-form button[name=index]")
    # The reason page lists what will change and does nothing yet.
    assert "Reason" in browser.text and "Friday" in browser.text
    assert ConsolidationProposal.objects.get(pk=proposal.pk).state == ProposalState.OPEN
    browser.screenshot("apply asks for a reason")

    browser.fill("#id_reason", "the same rule, said twice")
    browser.click("#content form [type=submit]")

    assert browser.path.startswith("/admin/lifecycle/consolidationproposal/")
    assert any("Applied" in message for message in browser.messages()), browser.messages()
    browser.screenshot("proposal applied")
    assert ConsolidationProposal.objects.get(pk=proposal.pk).state == ProposalState.APPLIED
    superseded = Memory.objects.get(pk__in=proposal.memory_ids, superseded_by__isnull=False)
    assert MemoryVersion.objects.filter(memory=superseded, reason="the same rule, said twice").exists()
