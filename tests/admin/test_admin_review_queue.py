"""The review queue: drafts and open proposals waiting for a curator, decided with a reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from lifecycle.models import ConsolidationProposal, LifecycleRun, ProposalState
from lifecycle.services import proposal_create
from memories.decisions import memory_delete, memory_verify
from memories.models import Memory, MemoryVersion
from organizations.models import Role, User
from tests.admin.conftest import StaffFactory, form_data, messages_of
from tests.conftest import MemoryFactory, Tenant

Login = Callable[[User], Client]
QUEUE = "admin:review_queue"


@pytest.fixture
def curator_client(acme: Tenant, make_staff: StaffFactory, login: Login) -> Client:
    return login(make_staff("carol", acme.organization, Role.CURATOR))


def _keys(response: Any) -> list[str]:
    return [item.key for item in response.context["items"]]


def _proposal(tenant: Tenant, *memories: Memory, kind: str = "merge") -> ConsolidationProposal:
    proposal, _ = proposal_create(
        organization_id=tenant.organization.pk, kind=kind, memory_ids=[m.pk for m in memories],
        created_by="consolidation", survivor_id=memories[0].pk, evidence={"similarity": 0.97},
    )  # fmt: skip
    assert proposal is not None
    return proposal


def test_the_queue_holds_drafts_and_open_proposals_most_important_first(
    acme: Tenant, globex: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    minor = make_memory(title="Minor draft", importance=2)
    major = make_memory(title="Major draft", importance=9)
    make_memory(title="Verified", importance=10).pk and None
    memory_verify(principal=acme.curator, memory_id=Memory.objects.get(title="Verified").pk)
    memory_delete(principal=acme.agent, memory_id=make_memory(title="Deleted", importance=10).pk)
    make_memory(principal=globex.agent, title="Globex draft", importance=10)
    make_memory(principal=acme.person, title="Someone's own note", scope_type="user", importance=10)
    pair = [make_memory(title="Pair A", importance=5, status="active"), make_memory(title="Pair B", status="active")]
    proposal = _proposal(acme, *pair)

    response = curator_client.get(reverse(QUEUE))

    assert response.status_code == 200
    assert _keys(response) == [f"draft-{major.pk}", f"proposal-{proposal.pk}", f"draft-{minor.pk}"]
    assert response.context["review_waiting"] == 3
    page = response.content.decode()
    assert "Next item" in page and "Globex" not in page and "Someone" not in page


def test_the_waiting_count_is_on_every_admin_page(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    make_memory()
    make_memory()

    for page in (reverse("admin:index"), reverse("admin:memories_memory_changelist"), reverse(QUEUE)):
        body = curator_client.get(page).content.decode()
        assert 'Review queue <span class="count-badge">2</span>' in body, page
    sidebar = curator_client.get(reverse("admin:memories_memory_changelist")).content.decode()
    assert 'id="review-waiting-count">2<' in sidebar


def test_the_queue_and_its_count_read_only_what_waits(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    make_memory()
    Memory.objects.filter(pk=make_memory(status="active").pk).update(review_flags=[{"kind": "secret"}])
    # An organization whose memories are mostly reviewed, as the planner will know it: what waits is
    # a few rows among thousands.
    Memory.objects.bulk_create(
        Memory(organization=acme.organization, memory_type="fact", title=f"Reviewed {n}",
               current_content=f"Reviewed fact number {n}.", status="active")
        for n in range(3000)
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")

    with CaptureQueriesContext(connection) as captured:
        assert curator_client.get(reverse(QUEUE)).context["review_waiting"] == 2
    reads = [q["sql"] for q in captured.captured_queries if '"review_flags"' in q["sql"] and "SELECT" in q["sql"]]
    plans = []
    with connection.cursor() as cursor:
        for sql in reads:
            cursor.execute(f"EXPLAIN {sql}")
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
    # The count on the page and the queue's page of drafts, each from the index of what waits
    # (memories 0018), not from every active memory of the organization.
    assert len(reads) >= 2
    assert [plan for plan in plans if "memory_awaiting_review_idx" not in plan] == []


def test_a_draft_shows_its_author_and_its_likely_duplicates(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    first = make_memory(title="Friday deploys", current_content="Never deploy to production on Friday afternoons.")
    make_memory(title="No Friday deploys", current_content="Never deploy to production on Friday afternoons.")

    response = curator_client.get(reverse(QUEUE))

    item = next(item for item in response.context["items"] if item.memory.pk == first.pk)
    assert [hint.title for hint in item.hints] == ["No Friday deploys"]
    assert item.hints[0].similarity >= 0.85
    page = response.content.decode()
    assert acme.agent.token is not None
    assert f"by {acme.agent.token.name} (agent)" in page


def test_verify_with_a_reason_then_the_next_item(make_memory: MemoryFactory, curator_client: Client) -> None:
    first, second = make_memory(title="First", importance=9), make_memory(title="Second", importance=3)

    response = curator_client.post(
        reverse("admin:review_decide"),
        {"memory": str(first.pk), "decision": "verify", "reason": "matches the runbook"},
        follow=True,
    )

    assert response.redirect_chain[-1][0] == reverse(QUEUE)
    assert messages_of(response) == ["Verified “First”. Next item below."]
    assert _keys(response) == [f"draft-{second.pk}"]
    first.refresh_from_db()
    assert first.status == "verified"
    version = MemoryVersion.objects.get(memory=first, version=2)
    assert (version.reason, version.actor) == ("matches the runbook", "user carol")


@pytest.mark.parametrize(("decision", "status"), [("lock", "locked"), ("deprecate", "deprecated")])
def test_lock_and_deprecate_from_the_queue(
    make_memory: MemoryFactory, curator_client: Client, decision: str, status: str
) -> None:
    memory = make_memory()

    curator_client.post(reverse("admin:review_decide"), {"memory": str(memory.pk), "decision": decision, "reason": "r"})

    memory.refresh_from_db()
    assert memory.status == status


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"decision": "verify", "reason": ""}, "Say why"),
        ({"decision": "verify", "reason": "x" * 2001}, "keep it to 2000"),
        ({"decision": "obliterate", "reason": "r"}, "Unknown decision"),
    ],
)
def test_a_decision_without_a_good_reason_changes_nothing(
    make_memory: MemoryFactory, curator_client: Client, data: dict[str, str], message: str
) -> None:
    memory = make_memory()

    response = curator_client.post(reverse("admin:review_decide"), {"memory": str(memory.pk), **data}, follow=True)

    assert any(message in said for said in messages_of(response))
    memory.refresh_from_db()
    assert memory.version == 1


def test_nobody_decides_on_another_organizations_draft(
    globex: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, login: Login
) -> None:
    memory = make_memory()
    client = login(make_staff("gary", globex.organization, Role.CURATOR))

    assert _keys(client.get(reverse(QUEUE))) == []
    response = client.post(
        reverse("admin:review_decide"), {"memory": str(memory.pk), "decision": "verify", "reason": "r"}
    )

    assert response.status_code == 404
    memory.refresh_from_db()
    assert memory.status == "draft"


def test_readers_have_no_queue_and_cannot_decide(
    acme: Tenant, make_memory: MemoryFactory, make_staff: StaffFactory, login: Login
) -> None:
    memory = make_memory()
    client = login(make_staff("rita", acme.organization, Role.READER))

    # No queue: the queue page sends them to the dashboard.
    assert client.get(reverse(QUEUE))["Location"] == reverse("admin:index")
    client.post(reverse("admin:review_decide"), {"memory": str(memory.pk), "decision": "verify", "reason": "r"})

    memory.refresh_from_db()
    assert memory.status == "draft"


def test_a_proposal_side_by_side_marks_the_differences(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    keep = make_memory(current_content="Deploys need two approvals.", status="active")
    other = make_memory(current_content="Deploys need three approvals.", status="active")
    proposal = _proposal(acme, keep, other)

    response = curator_client.get(reverse("admin:review_proposal", args=[proposal.pk]))

    columns = {column.memory.pk: column for column in response.context["columns"]}
    assert columns[keep.pk].is_survivor and ("insert", "three") in columns[other.pk].ops
    assert ("delete", "two") in columns[other.pk].ops
    assert '<ins class="diff">three</ins>' in response.content.decode()


def test_merge_a_proposal_choosing_the_survivor_and_its_text(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    suggested = make_memory(current_content="Deploys need two approvals.", status="active")
    chosen = make_memory(current_content="Deploys need 2 approvals.", status="active")
    proposal = _proposal(acme, suggested, chosen)

    response = curator_client.post(
        reverse("admin:review_proposal", args=[proposal.pk]),
        {
            "decision": "apply", "survivor": str(chosen.pk), "edit": "on",
            "content": "Deploys need two approvals from the owning team.", "reason": "same rule",
        },
        follow=True,
    )  # fmt: skip

    assert response.redirect_chain[-1][0] == reverse(QUEUE)
    proposal.refresh_from_db()
    assert proposal.state == ProposalState.APPLIED
    chosen.refresh_from_db()
    suggested.refresh_from_db()
    assert chosen.current_content == "Deploys need two approvals from the owning team."
    assert suggested.superseded_by_id == chosen.pk
    assert MemoryVersion.objects.filter(memory=suggested, reason="same rule").exists()


def test_dismiss_a_proposal_and_a_missing_reason_keeps_it_open(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    pair = [make_memory(status="active"), make_memory(status="active")]
    proposal = _proposal(acme, *pair)
    url = reverse("admin:review_proposal", args=[proposal.pk])

    refused = curator_client.post(url, {"decision": "dismiss", "reason": ""})
    assert "Say why" in refused.content.decode()
    proposal.refresh_from_db()
    assert proposal.state == ProposalState.OPEN

    curator_client.post(url, {"decision": "dismiss", "reason": "different services"})

    proposal.refresh_from_db()
    assert (proposal.state, proposal.reason) == (ProposalState.DISMISSED, "different services")
    # A decided proposal has left the queue, and its page with it.
    assert curator_client.get(url).status_code == 404


def test_a_contradiction_names_what_differs(acme: Tenant, make_memory: MemoryFactory, curator_client: Client) -> None:
    first = make_memory(current_content="The API timeout is 30 seconds.", status="active")
    second = make_memory(current_content="The API timeout is 60 seconds.", status="active")
    proposal, _ = proposal_create(
        organization_id=acme.organization.pk, kind="contradiction", memory_ids=[first.pk, second.pk],
        created_by="consolidation", evidence={"similarity": 0.95, "numbers": {"first": ["30"], "second": ["60"]}},
    )  # fmt: skip
    assert proposal is not None

    response = curator_client.get(reverse("admin:review_proposal", args=[proposal.pk]))

    assert response.context["differences"] == ["numbers: 30 in one, 60 in the other"]
    page = response.content.decode()
    assert "Found by consolidation: these memories are similar but <strong>disagree</strong>" in page
    # A contradiction is not a pair of duplicates: its buttons say what they do to it.
    assert ">Keep the chosen one</button>" in page and ">Dismiss (they do not contradict)</button>" in page
    assert "not duplicates" not in page


def test_a_draft_named_by_an_open_proposal_waits_once_inside_it(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    rule = make_memory(principal=acme.curator, current_content="The API timeout is 30 seconds.", status="verified")
    draft = make_memory(current_content="The API timeout is 60 seconds.")
    proposal = _proposal(acme, rule, draft, kind="contradiction")

    response = curator_client.get(reverse(QUEUE))

    assert _keys(response) == [f"proposal-{proposal.pk}"]
    assert response.context["review_waiting"] == 1
    assert "its own review waits for this proposal's decision" in response.content.decode()

    curator_client.post(
        reverse("admin:review_proposal", args=[proposal.pk]), {"decision": "dismiss", "reason": "both hold"}
    )
    # Dismissed, the proposal leaves; the draft, still unreviewed, waits on its own again.
    assert _keys(curator_client.get(reverse(QUEUE))) == [f"draft-{draft.pk}"]


def test_applying_says_which_memory_was_kept_and_which_went(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    kept = make_memory(title="Two approvals per deploy", current_content="Deploys need two approvals.", status="active")
    gone = make_memory(title="Deploys: 2 approvals", current_content="Deploys need 2 approvals.", status="active")
    proposal = _proposal(acme, kept, gone)

    response = curator_client.post(
        reverse("admin:review_proposal", args=[proposal.pk]),
        {"decision": "apply", "survivor": str(kept.pk), "reason": "same rule"},
        follow=True,
    )

    assert messages_of(response) == [
        "Kept “Two approvals per deploy”; superseded by it: “Deploys: 2 approvals”. Next item below."
    ]


def test_the_proposal_list_links_open_proposals_to_their_review(
    acme: Tenant, make_memory: MemoryFactory, curator_client: Client
) -> None:
    open_one = _proposal(acme, make_memory(status="active"), make_memory(status="active"))
    decided = _proposal(acme, make_memory(status="active"), make_memory(status="active"))
    curator_client.post(
        reverse("admin:review_proposal", args=[decided.pk]), {"decision": "dismiss", "reason": "not the same"}
    )

    page = curator_client.get(reverse("admin:lifecycle_consolidationproposal_changelist"))

    body = page.content.decode()
    assert reverse("admin:review_proposal", args=[open_one.pk]) in body
    assert reverse("admin:review_proposal", args=[decided.pk]) not in body


def test_view_site_leads_to_a_real_page(curator_client: Client) -> None:
    index = curator_client.get(reverse("admin:index"))

    assert index.context["site_url"] == "/api/docs/"
    assert 'href="/api/docs/"' in index.content.decode()
    assert curator_client.get("/api/docs/").status_code == 200


def test_a_long_queue_is_paged_in_order(acme: Tenant, make_memory: MemoryFactory, curator_client: Client) -> None:
    drafts = [make_memory(title=f"Draft {n}", importance=1 + n % 10) for n in range(30)]
    ordered = sorted(drafts, key=lambda m: (-m.importance, -m.created_at.timestamp()))

    first = curator_client.get(reverse(QUEUE))
    second = curator_client.get(reverse(QUEUE), {"page": 2})

    assert _keys(first) + _keys(second) == [f"draft-{m.pk}" for m in ordered]
    assert "26\u201330 shown" in second.content.decode()  # an en dash
    assert 'id="queue-next-page"' in first.content.decode()
    assert 'id="queue-next-page"' not in second.content.decode()
    # A page past the end, or a bad number, is answered, not an error.
    assert _keys(curator_client.get(reverse(QUEUE), {"page": 9})) == []
    assert _keys(curator_client.get(reverse(QUEUE), {"page": "x"})) == _keys(first)


def test_a_draft_still_embedding_says_so_instead_of_having_no_duplicates(
    make_memory: MemoryFactory, curator_client: Client
) -> None:
    draft = make_memory(title="Fresh draft")
    Memory.objects.filter(pk=draft.pk).update(embedding=None, embedding_status="pending")

    page = curator_client.get(reverse(QUEUE)).content.decode()

    assert "Similar memories are looked for once its embedding is ready (pending)." in page
    assert "No similar memory in its scope." not in page


@pytest.mark.parametrize(
    ("role", "lands_on"), [(Role.CURATOR, QUEUE), (Role.ADMIN, QUEUE), (Role.READER, "admin:index")]
)
def test_after_logging_in_a_curator_lands_on_the_queue(
    acme: Tenant, make_staff: StaffFactory, client: Client, role: str, lands_on: str
) -> None:
    make_staff("dana", acme.organization, role)

    form = form_data(client.get(reverse("admin:login")), "login-form")

    response = client.post(
        reverse("admin:login"), {**form, "username": "dana", "password": "unused-password-1"}, follow=True
    )

    assert response.redirect_chain[-1][0] == reverse(lands_on)
    # Asked for on the way to another page, the login goes there instead.
    client.logout()
    wanted = reverse("admin:memories_memory_changelist")
    response = client.post(
        reverse("admin:login") + f"?next={wanted}", {"username": "dana", "password": "unused-password-1"}
    )
    assert response["Location"] == wanted


def test_the_proposal_list_reads_at_a_glance(acme: Tenant, make_memory: MemoryFactory, curator_client: Client) -> None:
    """Kind and whole titles together, survivor first; who found it; who decided, when and why."""
    kept = make_memory(title="Deploys need two approvals from the owning team", status="active")
    other = make_memory(title="Deploys need 2 approvals", status="active")
    decided = _proposal(acme, kept, other)
    curator_client.post(
        reverse("admin:review_proposal", args=[decided.pk]), {"decision": "dismiss", "reason": "different teams"}
    )

    page = curator_client.get(reverse("admin:lifecycle_consolidationproposal_changelist")).content.decode()

    assert (
        '<strong class="proposal-kind">Merge duplicates</strong><div class="proposal-members">'
        "<div>★ Deploys need two approvals from the owning team</div><div>Deploys need 2 approvals</div></div>"
    ) in page
    assert '<span class="chip chip-proposal-dismissed">Dismissed</span><br>by user carol <small' in page
    assert "“different teams”" in page
    assert "similarity 0.970 · found by consolidation" in page


def test_lifecycle_run_counts_read_as_words(acme: Tenant, curator_client: Client) -> None:
    run = LifecycleRun.objects.create(
        organization=acme.organization, kind="consolidation", status="completed",
        counts={"examined": 12, "auto_merged": 0, "proposals": {"merge": 1, "contradiction": 2}},
    )  # fmt: skip
    run.refresh_from_db()

    assert run.counts_summary == "examined 12, auto merged 0, proposals: 1 merge, 2 contradiction"
    for page in (reverse("admin:index"), reverse("admin:lifecycle_lifecyclerun_changelist")):
        body = curator_client.get(page).content.decode()
        assert "examined 12, auto merged 0, proposals: 1 merge, 2 contradiction" in body, page
        assert "{&#x27;merge&#x27;" not in body and "{'merge'" not in body, page
