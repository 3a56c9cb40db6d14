"""Provenance and review: who wrote a memory, how far curators stand behind it, and what the
organization's write policy does to a write below the curator role.

What one agent writes must not steer the others past the curators. So every memory carries its
author (an agent, a person or the platform) and its review state (unreviewed, verified, locked),
and every read shows both. A write from a role below curator is screened here before it is stored:

- a credential (an API key, a token, a private key, a password given a value) is refused, naming its
  kind and where it is, or, where the organization's policy says so, replaced by ``[REDACTED: kind]``;
  this holds for curators too;
- text that addresses the reading agent with instructions (screening.instructions) is stored as a
  draft with a flag for the review queue, whatever status was asked for;
- a pin (tag ``pinned`` or ``metadata.pinned``) needs a curator: the memory waits as a draft;
- only the memory types the policy lists may be made active; any other is stored as a draft;
- importance above the policy's ceiling is stored at the ceiling, the asked value kept in the flag;
- a change to a verified memory puts it back to unreviewed: curators stand behind what they read.

Each adjustment is a *note* in the write's answer (never silent) and, where a curator should look,
a *flag* on the memory, which the review queue lists until a curator verifies or locks it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memories.models import (
    RULE_TYPES,
    AuthorKind,
    CredentialHandling,
    Memory,
    MemoryType,
    ReviewState,
    Status,
    WritePolicy,
)
from memory_platform.db.prepared import prepared_cursor
from memory_platform.exceptions import ValidationError
from memory_platform.timefmt import iso
from organizations.models import Organization, Role
from organizations.principal import Principal
from screening import SecretFinding, find_instructions, find_secrets, redact_secrets

PIN_TAG = "pinned"
CURATED_STATUSES = frozenset({Status.VERIFIED, Status.LOCKED})
# The fields whose text is screened, in the order a refusal names them.
TEXT_FIELDS = ("title", "current_content", "tags", "metadata", "source")


# --- provenance and review, as every read shows them ------------------------------------------


def author_of(principal: Principal) -> tuple[str, str]:
    """(kind, name) of the author a write by ``principal`` gets."""
    if principal.token is not None:
        name = principal.token.name or principal.token.display
        if principal.token.user is not None:
            name = f"{name} (for {principal.token.user.get_username()})"
        return AuthorKind.AGENT, name
    if principal.user is not None:
        return AuthorKind.PERSON, principal.user.get_username()
    return AuthorKind.SYSTEM, principal.operator or "system"


def review_state(status: str) -> str:
    if status == Status.LOCKED:
        return ReviewState.LOCKED
    if status == Status.VERIFIED:
        return ReviewState.VERIFIED
    return ReviewState.UNREVIEWED


def is_curated(memory: Memory) -> bool:
    return memory.status in CURATED_STATUSES


def author_payload(memory: Memory) -> dict[str, Any]:
    return {"kind": memory.author_kind, "name": memory.author_name or None}


def review_payload(memory: Memory) -> dict[str, Any]:
    state = review_state(memory.status)
    reviewed = state != ReviewState.UNREVIEWED
    at: datetime | None = memory.reviewed_at if reviewed else None
    return {
        "state": state,
        "by": (memory.reviewed_by or None) if reviewed else None,
        "at": iso(at),
        "flags": [flag.get("code") for flag in memory.review_flags or [] if isinstance(flag, dict)],
    }


def provenance_line(memory: Memory) -> str:
    """How a bundle names a memory's standing: "locked by Ana", "unreviewed, written by ci-bot (agent)"."""
    state = review_state(memory.status)
    if state != ReviewState.UNREVIEWED:
        return f"{state} by {memory.reviewed_by}" if memory.reviewed_by else str(state)
    flags = [flag.get("code") for flag in memory.review_flags or [] if isinstance(flag, dict)]
    flagged = f"; flagged: {', '.join(str(code) for code in flags)}" if flags else ""
    return f"unreviewed, written by {memory.author_name or 'unknown'} ({memory.author_kind}){flagged}"


def set_author(memory: Memory, principal: Principal) -> None:
    memory.author_kind, memory.author_name = author_of(principal)


def set_review(memory: Memory, principal: Principal, now: datetime) -> list[str]:
    """After a status change: a curated status names its reviewer and clears the flags (the review
    resolved them); an unreviewed one names nobody. The fields it changed."""
    if memory.status in CURATED_STATUSES:
        memory.reviewed_by = author_of(principal)[1]
        memory.reviewed_at = now
        memory.review_flags = []
        return ["reviewed_by", "reviewed_at", "review_flags"]
    if memory.status in (Status.DRAFT, Status.ACTIVE) and (memory.reviewed_by or memory.reviewed_at):
        memory.reviewed_by, memory.reviewed_at = "", None
        return ["reviewed_by", "reviewed_at"]
    return []


# --- the write policy ---------------------------------------------------------------------------


# The policy is read on every write, with a prepared statement (a tenth of a millisecond, where the
# ORM's query cost 1.5-2 ms); the model built from a row is kept while the row stays the same.
_POLICY_SQL = (
    "SELECT agent_active_types, agent_max_importance, pin_requires_curator, credentials, updated_at, updated_by "
    "FROM memories_writepolicy WHERE organization_id = %s"
)
_policies: dict[int, tuple[tuple[Any, ...], WritePolicy]] = {}


def write_policy_for(organization: Organization) -> WritePolicy:
    """The organization's policy, or the defaults when it never set one (an unsaved row)."""
    with prepared_cursor() as cursor:
        cursor.execute(_POLICY_SQL, [organization.pk])
        row = cursor.fetchone()
    state = tuple(row) if row is not None else ()
    kept = _policies.get(organization.pk)
    if kept is not None and kept[0] == state:
        return kept[1]
    policy = WritePolicy(organization=organization)
    if row is not None:
        (policy.agent_active_types, policy.agent_max_importance, policy.pin_requires_curator, policy.credentials,
         policy.updated_at, policy.updated_by) = row  # fmt: skip
        policy._state.adding = False
    _policies[organization.pk] = (state, policy)
    return policy


@dataclass(frozen=True)
class Note:
    """What the platform did to a write, as its answer says it."""

    code: str  # credentials, instructions, pin, type, importance, reviewed_changed, flags_pending
    message: str
    field: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "field": self.field, "message": self.message}


@dataclass
class Screening:
    """A write's screening: the fields it may store, the flags for curators, the notes for the writer."""

    data: dict[str, Any]
    flags: list[dict[str, Any]] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    importance: int | None = None  # the policy's ceiling, when the write asked for more

    def flag(self, code: str, message: str, field_name: str | None = None, **extra: Any) -> None:
        """Flag the memory for a curator; the writer is told the same."""
        self.flags = [flag for flag in self.flags if flag.get("code") != code]
        self.flags.append({"code": code, "message": message, "field": field_name, **extra})
        self.notes = [note for note in self.notes if note.code != code]
        self.note(code, message, field_name)

    def note(self, code: str, message: str, field_name: str | None = None) -> None:
        self.notes.append(Note(code, message, field_name))


def _texts(name: str, value: Any) -> Iterator[tuple[str, str]]:
    """(place, text) of every string in a field's value: list items, object keys and values."""
    if isinstance(value, str):
        yield name, value
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _texts(f"{name}[{index}]", item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield f"{name} key", key
            yield from _texts(f"{name}.{key}", item)


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    if isinstance(value, dict):
        return {(_redacted(k) if isinstance(k, str) else k): _redacted(v) for k, v in value.items()}
    return value


def _describe(found: list[tuple[str, SecretFinding]]) -> str:
    places = [f"{finding.kind} in {finding.where(place)}" for place, finding in found]
    return "; ".join(places[:5]) + (f" (and {len(places) - 5} more)" if len(places) > 5 else "")


def screen_credentials(
    data: Mapping[str, Any], policy: WritePolicy, fields: tuple[str, ...] = TEXT_FIELDS
) -> Screening:
    """Refuse (or redact, as the policy says) every credential in the raw fields of a write.

    Runs on the fields as the client sent them, before they are parsed, so that no error message
    about another field ever quotes a credential back. The message names kinds and places only.
    """
    screening = Screening(data=dict(data))
    found: list[tuple[str, SecretFinding]] = []
    for name in fields:
        if name in data:
            found.extend((place, finding) for place, text in _texts(name, data[name]) for finding in find_secrets(text))
    if not found:
        return screening
    if policy.credentials != CredentialHandling.REDACT:
        raise ValidationError(
            f"credentials are never stored: found what looks like {_describe(found)}. Remove it and say where the "
            "secret is kept instead (a vault path, the name of an environment variable), or ask an organization "
            "admin to set the write policy to redact credentials",
            details={
                "field": found[0][0].split("[")[0].split(".")[0].split(" ")[0],
                "credentials": [
                    {"kind": finding.kind, "field": place, "line": finding.line} for place, finding in found
                ],
            },
        )
    for name in {place.split("[")[0].split(".")[0].split(" ")[0] for place, _ in found}:
        screening.data[name] = _redacted(data[name])
    message = f"credentials were replaced by [REDACTED: kind] before storing: {_describe(found)}"
    screening.flag("credentials", message, kinds=sorted({finding.kind for _, finding in found}))
    return screening


def screened_text(organization: Organization, field_name: str, text: str) -> str:
    """One text a service stores outside a memory's own write (a merge's new content): refused when it
    holds a credential, or redacted where the organization's policy says so."""
    return str(screened_values(organization, {field_name: text})[field_name])


def screened_values(organization: Organization, values: Mapping[str, Any]) -> dict[str, Any]:
    """Named values (texts, or JSON holding texts) screened as ``screened_text`` screens one."""
    present = {name: value for name, value in values.items() if value is not None}
    screening = screen_credentials(present, write_policy_for(organization), fields=tuple(present))
    return {**values, **screening.data}


def is_pinned(tags: list[str] | None, metadata: Mapping[str, Any] | None) -> bool:
    return PIN_TAG in (tags or []) or bool((metadata or {}).get("pinned") is True)


def _instruction_texts(values: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    for name in TEXT_FIELDS:
        if values.get(name) is not None:
            yield from _texts(name, values[name])


def _below_curator(principal: Principal) -> bool:
    return not principal.has_role(Role.CURATOR)


def apply_policy(
    principal: Principal,
    policy: WritePolicy,
    screening: Screening,
    *,
    values: Mapping[str, Any],
    status: str,
    current: Memory | None = None,
) -> str:
    """The status a write below the curator role may store, after flagging what a curator should see.

    ``values`` are the parsed fields the write sets (for an update: the changed ones); ``status`` is
    the status it asks for (for an update: the one it would end with). Adds flags and notes to
    ``screening`` and sets ``screening.importance`` when it caps the importance; returns the status to store.
    """
    if not _below_curator(principal):
        return status
    reasons: list[str] = []
    for place, text in _instruction_texts(values):
        findings = find_instructions(text)
        if findings:
            first = findings[0]
            message = (
                f"{place} {first.meaning} ('{first.excerpt}'): a memory is information for the agents that read "
                "it, never orders to them; a curator will review it"
            )
            screening.flag("instructions", message, place, patterns=sorted({f.code for f in findings}))
            reasons.append("its text reads as instructions to the agents that read it")
            break
    tags = values.get("tags", current.tags if current else [])
    metadata = values.get("metadata", current.metadata if current else {})
    if policy.pin_requires_curator and is_pinned(tags, metadata) and (current is None or _pin_added(current, values)):
        screening.flag("pin", "asks to be pinned; a pin puts it in every agent's recall, so a curator decides")
        reasons.append("pinning needs a curator")
    memory_type = values.get("memory_type") or (current.memory_type if current else MemoryType.FACT)
    if memory_type in RULE_TYPES and (current is None or {"memory_type", "current_content", "title"} & set(values)):
        screening.flag("rule", f"an unreviewed {memory_type}: agents follow rules, so a curator should stand behind it")
    if memory_type not in policy.agent_active_types:
        reasons.append(f"an agent's {memory_type} waits for a curator's review here")
    _cap_importance(policy, screening, values)
    if current is not None and current.status == Status.VERIFIED and status == Status.VERIFIED:
        who = f" by {current.reviewed_by}" if current.reviewed_by else ""
        screening.flag(
            "reviewed_changed",
            f"was verified{who}; a change from below the curator role makes it unreviewed until a curator "
            "reviews the change",
        )
        status = Status.ACTIVE
    if status == Status.ACTIVE and (reasons or (current is not None and _waiting(current, screening))):
        why = "; ".join(reasons) or "it has flags a curator has not cleared yet"
        screening.note("status", f"stored as a draft, not active: {why}", "status")
        return Status.DRAFT
    return status


def _pin_added(current: Memory, values: Mapping[str, Any]) -> bool:
    if "tags" not in values and "metadata" not in values:
        return False
    return not is_pinned(current.tags, current.metadata)


def _waiting(current: Memory, screening: Screening) -> bool:
    """Whether the memory still waits for a curator: flags other than an importance cap."""
    codes = {flag.get("code") for flag in [*(current.review_flags or []), *screening.flags] if isinstance(flag, dict)}
    return bool(codes - {"importance", "credentials", "rule"})


def _cap_importance(policy: WritePolicy, screening: Screening, values: Mapping[str, Any]) -> None:
    asked = values.get("importance")
    if not isinstance(asked, int) or asked <= policy.agent_max_importance:
        return
    ceiling = policy.agent_max_importance
    screening.importance = ceiling
    message = f"importance {asked} asked, {ceiling} stored: agents set at most {ceiling} here; a curator can raise it"
    screening.note("importance", message, "importance")
    screening.flag("importance", message, "importance", requested=asked)


def merged_flags(current: list[Any] | None, added: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The memory's flags after a write: the new ones replace older ones of the same code."""
    codes = {flag["code"] for flag in added}
    kept = [flag for flag in current or [] if isinstance(flag, dict) and flag.get("code") not in codes]
    return [*kept, *added]
