"""Abbreviations agents write and memories spell out (or the other way round): "PR" for "pull
request", "prod" for "production", "k8s" for "Kubernetes".

With SEARCH_EXPAND_ABBREVIATIONS a query is searched, by words and by meaning, with the long forms
of its abbreviations beside it. The list is a small built-in English one of common software and
business terms; terms written as they are more often than spelled out (API, SQL, ORM, JSON) are left
out, since their long forms only dilute a query (bench/retrieval.py: "ORM" expanded lost SQLAlchemy
questions).
"""

from __future__ import annotations

import re

from django.conf import settings

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


def expanded(query: str) -> str:
    """The query with the long forms of its abbreviations beside it (when SEARCH_EXPAND_ABBREVIATIONS)."""
    if not settings.SEARCH_EXPAND_ABBREVIATIONS:
        return query
    long_forms = list(dict.fromkeys(ABBREVIATIONS[word.lower()] for word in abbreviations_in(query)))
    return f"{query} ({'; '.join(long_forms)})" if long_forms else query
