"""/api/v1/proposals/, /memories/consolidate/ and /lifecycle/runs/: what the workers hand to curators."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from lifecycle import selectors, services
from lifecycle.merge import proposal_undo
from lifecycle.models import ConsolidationProposal, with_members
from lifecycle.selectors import duplicate_candidates
from memory_platform import pagination
from rest_api import serializers as s
from rest_api.views.base import ApiView

TAG = ["lifecycle"]
PROPOSALS = pagination.Keyset.of(("-created_at", pagination.Kind.MOMENT), ("-id", pagination.Kind.UUID))
RUNS = pagination.Keyset.of(("-started_at", pagination.Kind.MOMENT), ("-id", pagination.Kind.WHOLE))


def _proposal(proposal: ConsolidationProposal) -> Any:
    return s.ProposalSerializer(selectors.proposal_get_for_display(proposal)).data


class ProposalListView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="proposals_list",
        summary="Consolidation proposals",
        description=(
            "Duplicates to merge, contradictions and stale memories the workers (or agents) found, newest "
            "first; open ones by default (`state=all` for every state). Memories you cannot see are never named."
        ),
        parameters=[s.ProposalListQuerySerializer],
        responses={200: s.ProposalPageSerializer},
    )
    def get(self, request: Request) -> Response:
        query = self.query(s.ProposalListQuerySerializer)
        state = None if query["state"] == "all" else query["state"]
        listing = selectors.proposal_list(self.principal, state=state, kind=query.get("kind"))
        fingerprint = pagination.fingerprint({"proposals": state, "kind": query.get("kind"), "limit": query["limit"]})
        page = pagination.cursor_page(
            listing.prefetch_related(with_members()),
            PROPOSALS,
            limit=query["limit"],
            cursor=query.get("cursor"),
            fingerprint=fingerprint,
        )
        return Response({"results": s.ProposalSerializer(page.items, many=True).data, "next_cursor": page.next_cursor})


class ProposalDetailView(ApiView):
    @extend_schema(
        tags=TAG, operation_id="proposals_retrieve", summary="One proposal", responses={200: s.ProposalSerializer}
    )
    def get(self, request: Request, proposal_id: UUID) -> Response:
        return Response(_proposal(selectors.proposal_get(self.principal, proposal_id)))


class ProposalApplyView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="proposals_apply",
        summary="Apply a proposal (curators)",
        description=(
            "Merge: the survivor (the proposed one, or `survivor_id`) stays and takes the others' tags, highest "
            "importance and metadata, with `content` as its new text if given; the others are superseded, never "
            "deleted. Stale: the memory is deprecated. Every change is a version and an audit event; undo reverses it."
        ),
        request=s.ProposalApplySerializer,
        responses={200: s.ProposalSerializer},
    )
    def post(self, request: Request, proposal_id: UUID) -> Response:
        data = self.body(s.ProposalApplySerializer)
        proposal = services.proposal_apply(
            principal=self.principal,
            proposal_id=proposal_id,
            survivor_id=data.get("survivor_id"),
            content=data.get("content"),
            reason=data.get("reason", ""),
        )
        return Response(_proposal(proposal))


def _decision_view(
    name: str, decide: Callable[..., ConsolidationProposal], summary: str, description: str
) -> type[ApiView]:
    """A curator's decision that takes only a reason: dismiss, undo."""

    @extend_schema(
        tags=TAG,
        operation_id=f"proposals_{name}",
        summary=summary,
        description=description,
        request=s.ReasonSerializer,
        responses={200: s.ProposalSerializer},
    )
    def post(self: ApiView, request: Request, proposal_id: UUID) -> Response:
        reason = self.body(s.ReasonSerializer).get("reason", "")
        return Response(_proposal(decide(principal=self.principal, proposal_id=proposal_id, reason=reason)))

    return type(f"Proposal{name.title()}View", (ApiView,), {"post": post})


ProposalDismissView = _decision_view(
    "dismiss",
    services.proposal_dismiss,
    "Dismiss a proposal (curators)",
    "Not duplicates: these memories are never proposed together again.",
)
ProposalUndoView = _decision_view(
    "undo",
    proposal_undo,
    "Undo an applied proposal (curators)",
    "Every memory the proposal changed is put back exactly as it was (content, status, importance, tags, "
    "metadata, supersession), as new versions; links it added are marked removed. Refused (409) if a "
    "memory changed since: revert that one from its history.",
)


class ConsolidateView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="memories_consolidate",
        summary="Merge duplicate memories, or list candidates",
        description=(
            "Without `memory_ids`: duplicate and contradiction candidates among the memories you can see, about 20 "
            "a page (`next_cursor`, passed back as `cursor`, gives the next). With "
            "them: merge now if you may (agents: unreviewed memories only); otherwise a proposal for curators is "
            "filed and `outcome` is `proposed`. `dry_run` changes nothing."
        ),
        request=s.ConsolidateSerializer,
        responses={200: s.ConsolidationSerializer},
    )
    def post(self, request: Request) -> Response:
        data = self.body(s.ConsolidateSerializer)
        empty: dict[str, Any] = {
            "proposal_id": None, "survivor": None, "superseded": [], "result": {}, "clusters": [], "next_cursor": None,
        }  # fmt: skip
        if not data.get("memory_ids"):
            found = duplicate_candidates(self.principal, cursor=data.get("cursor") or None)
            return Response(
                {
                    **empty,
                    "outcome": "candidates",
                    "message": f"{len(found.clusters)} candidate clusters"
                    + ("; more with next_cursor" if found.next_cursor else ""),
                    "clusters": s.ClusterSerializer(found.clusters, many=True).data,
                    "next_cursor": found.next_cursor,
                }
            )
        done = services.memories_consolidate(
            principal=self.principal,
            memory_ids=data["memory_ids"],
            survivor_id=data.get("survivor_id"),
            content=data.get("content"),
            dry_run=data["dry_run"],
            reason=data.get("reason", ""),
        )
        return Response(
            {
                **empty,
                "outcome": done.outcome,
                "message": done.message,
                "proposal_id": done.proposal.pk if done.proposal else None,
                "survivor": s.MemorySerializer(done.survivor).data if done.survivor else None,
                "superseded": [memory.pk for memory in done.superseded],
                "result": done.result,
            }
        )


class LifecycleRunListView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="lifecycle_runs_list",
        summary="Lifecycle runs",
        description="Consolidation, decay and expiry passes over your organization, newest first, with their counts.",
        parameters=[s.LifecycleRunQuerySerializer],
        responses={200: s.LifecycleRunPageSerializer},
    )
    def get(self, request: Request) -> Response:
        query = self.query(s.LifecycleRunQuerySerializer)
        fingerprint = pagination.fingerprint({"runs": query.get("kind"), "limit": query["limit"]})
        page = pagination.cursor_page(
            selectors.run_list(self.principal, kind=query.get("kind")),
            RUNS,
            limit=query["limit"],
            cursor=query.get("cursor"),
            fingerprint=fingerprint,
        )
        return Response(
            {"results": s.LifecycleRunSerializer(page.items, many=True).data, "next_cursor": page.next_cursor}
        )
