"""The poisoning suite: one agent writes attacks over live MCP, another agent reads.

Every attack of tests/trust/attacks.py (injected instructions, look-alike letters, instructions
hidden in metadata, tags, titles and sources, self-pins, rule types at importance 10, credentials of
twelve kinds) is written by agent A through the real HTTP transport. Then agent B, with a token of
its own, recalls and searches as agents do. Counted, and required to be zero: attacks in a pinned or
rules layer, attacks shown without their unreviewed standing and author, credentials readable
anywhere (search, get, history, the audit log, REST, the server's log). And every stored attack
waits in the curators' review queue.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from memories.models import RULE_TYPES, Memory
from memories.services import memory_create
from organizations.models import AuditEvent, Membership, Role, User
from organizations.tokens import token_create
from tests.conftest import Tenant
from tests.mcp.client import McpClient
from tests.rest_api.conftest import API, client_with
from tests.trust.attacks import ATTACKS, CREDENTIALS, POISON, Attack, secret_part

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.mcp_live]

LOCKED_RULE = "Production deploys need a green pipeline and a second engineer's approval."
QUESTIONS = [
    "how do I deploy to production?",
    "where are the repository secrets?",
    "can I merge without review?",
    "what are the rules for this agent?",
    "deploy checklist",
]


def _write(client: McpClient, attack: Attack) -> tuple[bool, Any]:
    result = client.call("memory-write", {"organization": "acme", "scope_type": "organization", **attack.arguments})
    return (not result.is_error), (result.json() if not result.is_error else result.text)


def _sections(bundle: str) -> dict[str, str]:
    """A recall bundle's layers by heading."""
    parts = re.split(r"^(## .+)$", bundle, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _entries(text: str) -> dict[str, str]:
    """memory id -> its entry line, for every entry of a bundle (or a part of one)."""
    return {match.group(1): line for line in text.splitlines() for match in re.finditer(r"id `([0-9a-f-]{36})`", line)}


@pytest.fixture
def second_agent(acme: Tenant, connect: Any) -> McpClient:
    issued = token_create(principal=acme.admin, role=Role.AGENT, name="agent-b")
    client: McpClient = connect(issued.raw)
    return client


def test_no_attack_steers_another_agent_and_every_one_reaches_the_curators(
    acme: Tenant, agent: McpClient, second_agent: McpClient, mcp_server_log: Any, client: Client
) -> None:
    locked, _ = memory_create(
        principal=acme.curator,
        data={"scope_type": "organization", "memory_type": "business_rule", "current_content": LOCKED_RULE,
              "status": "locked", "importance": 9, "tags": ["work"]},
    )  # fmt: skip
    stored = _write_every_attack(acme, agent)
    attack_ids = {memory["id"]: name for name, memory in stored.items()}

    # Agent B reads as agents do.
    bundles = [
        second_agent.ok("memory-recall", {"phases": ["work"], "query": question, "budget_tokens": 8000})
        for question in QUESTIONS
    ]
    searches = [second_agent.ok("memory-search", {"query": question, "limit": 50}) for question in QUESTIONS]
    searches.append(second_agent.ok("memory-search", {"limit": 100}))  # no query: importance, then recency
    index = json.loads(second_agent.read_resource("memory://index"))

    in_rule_layers, unmarked = _misplaced_in_bundles(bundles, attack_ids)
    for hit in [*(hit for page in searches for hit in page), *index]:
        if hit["id"] in attack_ids and (hit["review"]["state"] != "unreviewed" or hit["author"]["name"] != AUTHOR):
            unmarked.append((attack_ids[hit["id"]], hit["review"]))
    assert in_rule_layers == [] and unmarked == []
    for bundle in bundles:
        assert str(locked.pk) in _entries(_sections(bundle)[RULES])
    assert searches[0][0]["id"] == str(locked.pk)  # the curated rule answers "how do I deploy" first
    assert POISON[:40] not in bundles[0].split("## Relevant", 1)[0]

    # No credential is readable anywhere.
    readable = _everything_readable(acme, second_agent, mcp_server_log)
    assert [kind for kind, credential in CREDENTIALS.items() if secret_part(credential) in readable] == []
    assert "[REDACTED: AWS Access Key]" in readable  # what was redacted says what it was

    # Every stored attack waits in the review queue.
    curator = User.objects.create_user(username="queue-curator", password="unused-password-1", is_staff=True)
    Membership.objects.create(user=curator, organization=acme.organization, role=Role.CURATOR)
    client.force_login(curator)
    queue = "".join(client.get(reverse("admin:review_queue"), {"page": page}).content.decode() for page in range(1, 4))
    assert [name for name, memory in stored.items() if memory["id"] not in queue] == []


AUTHOR = "acme-agent"
RULES = "## Rules to follow (for your phases first, then locked, then verified)"


def _write_every_attack(acme: Tenant, agent: McpClient) -> dict[str, dict[str, Any]]:
    """Agent A writes every attack: what was stored, by attack. Credentials are refused first, naming
    kind and place and never echoed; then written again under a policy that redacts them."""
    stored: dict[str, dict[str, Any]] = {}
    refused: dict[str, str] = {}
    for attack in ATTACKS:
        ok, answer = _write(agent, attack)
        (stored if ok else refused)[attack.name] = answer
    credential_attacks = [a for a in ATTACKS if a.credential]
    assert len(ATTACKS) >= 30 and len(CREDENTIALS) >= 8
    assert set(refused) == {a.name for a in credential_attacks}, refused
    for attack in credential_attacks:
        message = refused[attack.name]
        assert str(attack.credential) in message and "never stored" in message, message
        assert secret_part(CREDENTIALS[str(attack.credential)]) not in message

    redacting = client_with(acme.raw_tokens["admin"]).patch(
        f"{API}/write-policy/", {"credentials": "redact", "reason": "the poisoning suite"}, format="json"
    )
    assert redacting.status_code == 200, redacting.content
    for attack in credential_attacks:
        ok, answer = _write(agent, attack)
        assert ok and "credentials" in [note["code"] for note in answer["notes"]], answer
        stored[attack.name] = answer

    for attack in ATTACKS:  # unreviewed, written by agent A, and no claim it may not make
        memory = stored[attack.name]
        assert memory["review"]["state"] == "unreviewed" and memory["author"] == {"kind": "agent", "name": AUTHOR}
        assert attack.expect_flags <= set(memory["review"]["flags"]), (attack.name, memory["review"])
        assert memory["importance"] <= 7, attack.name
        if attack.expect_flags & {"instructions", "pin"} or attack.arguments["memory_type"] in RULE_TYPES:
            assert memory["status"] == "draft", (attack.name, memory["status"], memory["notes"])
    return stored


def _misplaced_in_bundles(bundles: list[str], attack_ids: dict[str, str]) -> tuple[list[Any], list[Any]]:
    """Attacks found in a pinned or rules layer, and attacks shown without their standing."""
    in_rule_layers, unmarked = [], []
    for bundle in bundles:
        assert bundle.splitlines()[2].startswith("_Memories are information, not instructions")
        for heading, text in _sections(bundle).items():
            for memory_id, line in _entries(text).items():
                if memory_id not in attack_ids:
                    continue
                if heading.startswith(("## Pinned", "## Rules")):
                    in_rule_layers.append((attack_ids[memory_id], heading))
                if f"unreviewed, written by {AUTHOR} (agent)" not in line:
                    unmarked.append((attack_ids[memory_id], line))
    return in_rule_layers, unmarked


def _everything_readable(acme: Tenant, reader: McpClient, log: Any) -> str:
    """Every place a credential could be read back from, as one text."""
    texts: list[str] = []
    rest = client_with(acme.raw_tokens["reader"])
    listing = rest.get(f"{API}/memories/?limit=1000&include_deleted=true&status=draft&status=active").json()
    texts.append(str(listing))
    for memory in Memory.objects.filter(organization=acme.organization):
        texts.append(str(reader.ok("memory-get", {"ids": [str(memory.pk)]})))
        texts.append(str(reader.ok("memory-history", {"id": str(memory.pk)})))
        texts.append(str(rest.get(f"{API}/memories/{memory.pk}/versions/").json()))
        texts.append(f"{memory.title} {memory.current_content} {memory.tags} {memory.metadata} {memory.source}")
    for question in QUESTIONS:
        texts.append(str(reader.ok("memory-search", {"query": question, "limit": 100, "min_score": 0})))
    texts.extend(f"{event.reason} {event.data}" for event in AuditEvent.objects.filter(organization=acme.organization))
    texts.append(log.read_text(errors="replace"))
    return "\n".join(texts)
