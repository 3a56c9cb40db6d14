"""repository-list and repository-create: the organization's repositories, which repository-scoped
memories and code indexes name."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mcp_api.server import tool
from memory_platform.timefmt import iso
from organizations import selectors, services
from organizations.models import Repository
from organizations.principal import Principal


def _repository(repository: Repository, **extra: Any) -> dict[str, Any]:
    return {"slug": repository.slug, "name": repository.name, "created_at": iso(repository.created_at), **extra}


@tool(
    "repository-list",
    title="List repositories",
    description=(
        "Your organization's repositories, by slug: the names repository-scoped memories (`repository`) and "
        "code indexes (code-index) take."
    ),
    read_only=True,
)
def repository_list(principal: Principal) -> list[dict[str, Any]]:
    return [_repository(repository) for repository in selectors.repository_list(principal)]


@tool(
    "repository-create",
    title="Create a repository",
    description=(
        "Add a repository to your organization (agent role and up), so that memories can be scoped to it and its "
        "code indexed. Naming one that exists returns it (`created`: false). A slug is lowercase letters, digits "
        "and dashes, e.g. payments-api."
    ),
    idempotent=True,
)
def repository_create(
    principal: Principal,
    *,
    slug: Annotated[str, Field(description="The repository's slug, e.g. payments-api.")],
    name: Annotated[str | None, Field(description="A readable name (optional).")] = None,
) -> dict[str, Any]:
    repository, created = services.repository_get_or_create_flagged(principal=principal, slug=slug, name=name or "")
    return _repository(repository, created=created)
