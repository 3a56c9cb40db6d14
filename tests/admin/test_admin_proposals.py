"""Curators decide on proposals in the admin: a page that shows what will change and asks why."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.admin import helpers
from django.test import Client

from lifecycle.consolidation import consolidation_run
from lifecycle.models import ConsolidationProposal, ProposalState
from memories.models import Memory, MemoryVersion
from tests.conftest import MemoryFactory, Tenant

pytestmark = [pytest.mark.django_db, pytest.mark.real_embedder]

URL = "/admin/lifecycle/consolidationproposal/"


@pytest.fixture
def proposal(acme: Tenant, make_memory: MemoryFactory) -> ConsolidationProposal:
    make_memory(current_content="Never deploy to production on Friday afternoons.")
    make_memory(current_content="Do not deploy to production on a Friday afternoon.")
    consolidation_run(organization=acme.organization)
    return ConsolidationProposal.objects.get(state=ProposalState.OPEN)


def test_applying_asks_for_a_reason_and_lists_what_changes(
    acme: Tenant, proposal: ConsolidationProposal, client_as: Callable[..., Client]
) -> None:
    client = client_as("carla", acme.organization, "curator")
    chosen = {"action": "apply_proposals", helpers.ACTION_CHECKBOX_NAME: [str(proposal.pk)]}

    page = client.post(URL, chosen)

    assert page.status_code == 200
    assert b"Reason" in page.content and b"Friday" in page.content
    assert ConsolidationProposal.objects.get(pk=proposal.pk).state == ProposalState.OPEN

    done = client.post(URL, {**chosen, "post": "yes", "reason": "the same rule"})

    assert done.status_code == 302
    assert ConsolidationProposal.objects.get(pk=proposal.pk).state == ProposalState.APPLIED
    superseded = Memory.objects.get(pk__in=proposal.memory_ids, superseded_by__isnull=False)
    assert MemoryVersion.objects.filter(memory=superseded, reason="the same rule").exists()

    client.post(URL, {"action": "undo_proposals", helpers.ACTION_CHECKBOX_NAME: [str(proposal.pk)],
                      "post": "yes", "reason": "two rules"})  # fmt: skip
    assert ConsolidationProposal.objects.get(pk=proposal.pk).state == ProposalState.UNDONE
    assert not Memory.objects.filter(pk__in=proposal.memory_ids, superseded_by__isnull=False).exists()


def test_readers_cannot_decide_and_outsiders_see_nothing(
    acme: Tenant, globex: Tenant, proposal: ConsolidationProposal, client_as: Callable[..., Client]
) -> None:
    reader = client_as("rita", acme.organization, "reader")
    reader.post(URL, {"action": "dismiss_proposals", helpers.ACTION_CHECKBOX_NAME: [str(proposal.pk)],
                      "post": "yes", "reason": "no"})  # fmt: skip
    assert ConsolidationProposal.objects.get(pk=proposal.pk).state == ProposalState.OPEN

    outsider = client_as("olga", globex.organization, "curator")
    assert b"Friday" not in outsider.get(URL).content
    assert outsider.get(f"{URL}{proposal.pk}/change/").status_code in (302, 404)
    outsider.post(URL, {"action": "dismiss_proposals", helpers.ACTION_CHECKBOX_NAME: [str(proposal.pk)],
                        "post": "yes", "reason": "no"})  # fmt: skip
    assert ConsolidationProposal.objects.get(pk=proposal.pk).state == ProposalState.OPEN
