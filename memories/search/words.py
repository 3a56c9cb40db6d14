"""Words agents write and memories spell otherwise: abbreviations ("PR" for "pull request", "prod"
for "production", "k8s" for "Kubernetes") and an organization's own names for things.

With SEARCH_EXPAND_ABBREVIATIONS a query is searched, by words and by meaning, with the long forms
of its abbreviations beside it, and with the other names of what it names in the organization's own
words: the sources registered here (the knowledge app registers its entities' names and aliases,
knowledge.words), each giving, for an organization, its names (normalized: whitespace collapsed,
case folded) and the other names of the same thing. The list is a small built-in English one of common software and
business terms; terms written as they are more often than spelled out (API, SQL, ORM, JSON) are left
out, since their long forms only dilute a query (bench/retrieval.py: "ORM" expanded lost SQLAlchemy
questions).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence

from django.conf import settings

WordSource = Callable[[int], Mapping[str, Sequence[str]]]
_sources: list[WordSource] = []
# The longest name looked for, in words ("the payments service API gateway").
NAME_WORDS_MAX = 5

ABBREVIATIONS: dict[str, str] = {
    "pr": "pull request", "prs": "pull requests", "mr": "merge request", "ci": "continuous integration",
    "db": "database", "dbs": "databases", "prod": "production", "dev": "development", "env": "environment",
    "envs": "environments", "k8s": "kubernetes", "repo": "repository", "repos": "repositories",
    "config": "configuration", "auth": "authentication", "authn": "authentication", "authz": "authorization",
    "mfa": "multi-factor authentication", "2fa": "two-factor authentication", "sso": "single sign-on",
    "ui": "user interface", "ux": "user experience", "qa": "quality assurance", "sla": "service level agreement",
    "slo": "service level objective", "sli": "service level indicator", "pii": "personal data",
    "tz": "time zone", "ttl": "time to live", "dns": "domain name system", "vpn": "virtual private network",
    "aws": "amazon web services", "gcp": "google cloud platform", "gh": "github", "docs": "documentation",
    "deps": "dependencies", "dep": "dependency", "impl": "implementation", "perf": "performance",
    "infra": "infrastructure", "sre": "site reliability engineering", "eta": "estimated time of arrival",
    "pto": "paid time off", "ooo": "out of office", "eod": "end of day", "e2e": "end-to-end",
    "ff": "feature flag", "pk": "primary key", "fk": "foreign key",
    "rca": "root cause analysis", "pitr": "point-in-time recovery", "rpo": "recovery point objective",
    "rto": "recovery time objective", "psp": "payment service provider", "kyc": "know your customer",
    "cli": "command line", "vm": "virtual machine", "lb": "load balancer", "cdn": "content delivery network",
    "iam": "identity and access management", "rbac": "role-based access control", "acl": "access control list",
    "otp": "one-time password", "msg": "message", "tx": "transaction", "txn": "transaction",
    "async": "asynchronous", "attr": "attribute", "arg": "argument", "args": "arguments",
    "param": "parameter", "params": "parameters", "req": "request", "resp": "response",
}  # fmt: skip

_TOKEN = re.compile(r"[A-Za-z0-9]+")


def abbreviations_in(query: str) -> list[str]:
    """The query's words that are abbreviations of the list (as written)."""
    return [token for token in _TOKEN.findall(query) if token.lower() in ABBREVIATIONS]


def register_words(source: WordSource) -> None:
    """Add a source of organizations' own words (once; an app's ready() calls it)."""
    if source not in _sources:
        _sources.append(source)


def forget_words() -> None:
    """Every source's kept words forgotten (those that keep any: a ``forget()`` method)."""
    for source in _sources:
        forget = getattr(source, "forget", None)
        if callable(forget):
            forget()


_EDGES = "\"'()[]{}<>,;:!?."


def name_words(text: str) -> list[str]:
    """How a query and a name are split to be compared: words, case folded, punctuation at their
    edges dropped ("Kubernetes?" is "kubernetes"; ".NET" is "net")."""
    return [word for word in (raw.strip(_EDGES).casefold() for raw in text.split()) if word]


def word_key(word: str) -> str:
    """The key of one word (no whitespace in it): name_key, quicker."""
    return word.strip(_EDGES).casefold()


def name_key(name: str) -> str:
    """The key a source gives a name under: its words joined by single spaces."""
    return " ".join(name_words(name))


def organization_words(query: str, organization_id: int) -> list[str]:
    """The other names of what the query names, in the organization's own words (longest names first:
    "payments service" before "service")."""
    known = [source(organization_id) for source in _sources]
    if not any(known):
        return []
    words = name_words(query)
    found: list[str] = []
    taken = [False] * len(words)
    for size in range(min(NAME_WORDS_MAX, len(words)), 0, -1):
        for start in range(len(words) - size + 1):
            if any(taken[start : start + size]):
                continue
            name = " ".join(words[start : start + size])
            others = [other for source in known for other in source.get(name, ())]
            if others:
                taken[start : start + size] = [True] * size
                found += others
    return found


def searched_words(query: str, organization_id: int) -> tuple[str, ...]:
    """The organization's own words a query is searched with (none without a query or expansion):
    read once a search, so its pages' cursors and its retrievers see the same ones."""
    if not query or not settings.SEARCH_EXPAND_ABBREVIATIONS:
        return ()
    return tuple(organization_words(query, organization_id))


def words_digest(words: Sequence[str]) -> str:
    """A short digest of the organization's words a query is searched with ("" when none): a cursor
    carries it, so a later page knows it is searched as the first was."""
    return hashlib.sha256("\n".join(words).encode()).hexdigest()[:12] if words else ""


def expanded(query: str, organization_id: int | None = None, *, words: Sequence[str] | None = None) -> str:
    """The query with the long forms of its abbreviations and the organization's other names for what
    it names beside it (when SEARCH_EXPAND_ABBREVIATIONS); ``words``: those names, already read."""
    if not settings.SEARCH_EXPAND_ABBREVIATIONS:
        return query
    beside = [ABBREVIATIONS[word.lower()] for word in abbreviations_in(query)]
    if words is not None:
        beside += words
    elif organization_id is not None:
        beside += organization_words(query, organization_id)
    said = query.casefold()
    beside = [word for word in dict.fromkeys(beside) if word.casefold() not in said]
    return f"{query} ({'; '.join(beside)})" if beside else query
