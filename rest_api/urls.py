"""Routes of /api/v1/ (namespace "api")."""

from __future__ import annotations

from django.urls import path

from rest_api.views import code, knowledge, lifecycle, memories, memory, organization, transfer

app_name = "api"

urlpatterns = [
    path("memories/", memories.MemoryListView.as_view(), name="memory-list"),
    path("memories/search/", memories.MemorySearchView.as_view(), name="memory-search"),
    path("memories/batch/", memories.MemoryBatchView.as_view(), name="memory-batch"),
    path("memories/consolidate/", lifecycle.ConsolidateView.as_view(), name="memory-consolidate"),
    path("memories/<uuid:memory_id>/", memory.MemoryDetailView.as_view(), name="memory-detail"),
    path("memories/<uuid:memory_id>/versions/", memory.MemoryVersionsView.as_view(), name="memory-versions"),
    path("memories/<uuid:memory_id>/links/", memory.MemoryLinksView.as_view(), name="memory-links"),
    path("memories/<uuid:memory_id>/mentions/", memory.MemoryMentionsView.as_view(), name="memory-mentions"),
    path("memories/<uuid:memory_id>/graph/", memory.MemoryGraphView.as_view(), name="memory-graph"),
    path("memories/<uuid:memory_id>/verify/", memory.MemoryVerifyView.as_view(), name="memory-verify"),
    path("memories/<uuid:memory_id>/lock/", memory.MemoryLockView.as_view(), name="memory-lock"),
    path("memories/<uuid:memory_id>/unlock/", memory.MemoryUnlockView.as_view(), name="memory-unlock"),
    path("memories/<uuid:memory_id>/deprecate/", memory.MemoryDeprecateView.as_view(), name="memory-deprecate"),
    path("memories/<uuid:memory_id>/restore/", memory.MemoryRestoreView.as_view(), name="memory-restore"),
    path("memories/<uuid:memory_id>/reactivate/", memory.MemoryReactivateView.as_view(), name="memory-reactivate"),
    path("memories/<uuid:memory_id>/revert/", memory.MemoryRevertView.as_view(), name="memory-revert"),
    path("memories/<uuid:memory_id>/invalidate/", memory.MemoryInvalidateView.as_view(), name="memory-invalidate"),
    path("proposals/", lifecycle.ProposalListView.as_view(), name="proposal-list"),
    path("proposals/<uuid:proposal_id>/", lifecycle.ProposalDetailView.as_view(), name="proposal-detail"),
    path("proposals/<uuid:proposal_id>/apply/", lifecycle.ProposalApplyView.as_view(), name="proposal-apply"),
    path("proposals/<uuid:proposal_id>/dismiss/", lifecycle.ProposalDismissView.as_view(), name="proposal-dismiss"),
    path("proposals/<uuid:proposal_id>/undo/", lifecycle.ProposalUndoView.as_view(), name="proposal-undo"),
    path("lifecycle/runs/", lifecycle.LifecycleRunListView.as_view(), name="lifecycle-run-list"),
    path("links/", knowledge.LinkCreateView.as_view(), name="link-list"),
    path("links/<int:pk>/", knowledge.LinkDetailView.as_view(), name="link-detail"),
    path("triples/", knowledge.TripleListView.as_view(), name="triple-list"),
    path("triples/<int:pk>/invalidate/", knowledge.TripleInvalidateView.as_view(), name="triple-invalidate"),
    path("entities/", knowledge.EntityListView.as_view(), name="entity-list"),
    path("entities/<int:pk>/", knowledge.EntityDetailView.as_view(), name="entity-detail"),
    path("entities/<int:pk>/aliases/", knowledge.EntityAliasView.as_view(), name="entity-aliases"),
    path("entities/<int:pk>/related/", knowledge.EntityRelatedView.as_view(), name="entity-related"),
    path("repositories/", organization.RepositoryListView.as_view(), name="repository-list"),
    path("repositories/<slug:slug>/", organization.RepositoryDetailView.as_view(), name="repository-detail"),
    path("code/repositories/", code.CodeIndexListView.as_view(), name="code-index-list"),
    path("code/repositories/<slug:slug>/", code.CodeIndexDetailView.as_view(), name="code-index-detail"),
    path("code/repositories/<slug:slug>/index/", code.CodeIndexPathView.as_view(), name="code-index-path"),
    path("code/repositories/<slug:slug>/manifest/", code.CodeManifestView.as_view(), name="code-index-manifest"),
    path("code/repositories/<slug:slug>/files/", code.CodeFilesView.as_view(), name="code-index-files"),
    path("code/repositories/<slug:slug>/runs/", code.CodeRunListView.as_view(), name="code-index-runs"),
    path("code/search/", code.CodeSearchView.as_view(), name="code-search"),
    path("tokens/", organization.TokenListView.as_view(), name="token-list"),
    # slug: prefixes are hex; anything else (a NUL byte included) never reaches the database.
    path("tokens/<slug:prefix>/", organization.TokenDetailView.as_view(), name="token-detail"),
    path("texts/", organization.TextListView.as_view(), name="text-list"),
    path("texts/<str:key>/", organization.TextDetailView.as_view(), name="text-detail"),
    path("write-policy/", organization.WritePolicyView.as_view(), name="write-policy"),
    path("export/", transfer.ExportView.as_view(), name="export"),
    path("import/", transfer.ImportView.as_view(), name="import"),
    path("status/", organization.StatusView.as_view(), name="status"),
]
