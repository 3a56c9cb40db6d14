"""Ingest throughput through the service layer, and the synthetic corpus the benches share.

The corpus: what organizations keep for their agents (business rules, decisions, conventions,
facts, risks, tech stack notes, preferences...), written from templates filled with a vocabulary
of services, teams, tools, environments, people, numbers and dates. It is deterministic for a
seed, memories run 15-40 words, exact duplicates are re-drawn, and each organization has its own
services, people and ticket keys, so organizations' memories differ as real ones do.

Organizations: one large tenant (~50% of the rows, plus a few system-scope memories every tenant
sees), four medium ones (6% each), a tiny one (1%), a 50-row one, and 40 small ones sharing the
rest.

This bench compares, on that corpus (batches of --batch-size):
  - raw embedding throughput: get_provider().embed alone on the same texts, in batches of the same
    size (every --raw-every-th batch is embedded again right after it was ingested, so both rates
    see the same load on a shared machine);
  - batch ingest: memory_batch_create (the batch is embedded in chunks, each chunk inserted with one
    statement each for its memories, versions and audit events while the next ones are embedded);
  - single writes: memory_create one by one, on a smaller sample.

    python bench/ingest.py --memories 20000 --batch-size 64 --json bench/results/$(date +%F)/ingest.json
"""

from __future__ import annotations

import argparse
import random
import string
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import CpuMeter, backend_pid, print_table, scratch_database, write_json

# --- vocabulary --------------------------------------------------------------------------------


def _split(names: str) -> list[str]:
    return names.split()


# Service names: a domain and a kind ("billing-api", "fraud-worker"...): 500 of them.
SERVICE_DOMAINS = _split(
    "billing checkout ledger auth notification search inventory pricing fraud payout report profile session "
    "media email webhook order catalog recommendation audit feature-flag tax shipping returns support export "
    "metrics identity consent invoice subscription loyalty geo rate-limit document kyc settlement warehouse mobile "
    "admin partner pdf translation image sms scheduler etl cache event reconciliation"
)
SERVICE_KINDS = _split("api service worker gateway sync job engine store portal bridge")
SERVICES = [f"{domain}-{kind}" for domain in SERVICE_DOMAINS for kind in SERVICE_KINDS]
TEAMS = [
    "Payments", "Platform", "Data Engineering", "Growth", "Mobile", "Security", "SRE", "Support Tooling", "Risk",
    "Logistics", "Identity", "Finance Systems", "Search", "Infrastructure", "Frontend", "ML Platform",
    "Compliance", "Partner Integrations", "Core API", "Checkout", "Billing Ops", "Developer Experience", "QA",
    "Analytics", "Trust and Safety",
]  # fmt: skip
FIRST_NAMES = _split(
    "Alice Bruno Chloe Dmitri Elena Farid Grace Hugo Ines Jonas Keiko Liam Maya Nadia Omar Priya Quentin Rosa "
    "Samir Tariq Uma Victor Wen Ximena Yusuf Zoe Anders Beatriz Carlos Dana Emeka Fatima Gustav Hana Ivan Julia "
    "Kwame Lena Mateo Noor"
)
LAST_NAMES = _split(
    "Almeida Berger Costa Dubois Eriksen Fischer Garcia Haddad Ivanova Jensen Kowalski Lindqvist Moreau Nakamura "
    "Okafor Petrov Quinn Rossi Schmidt Tanaka Usman Varga Weber Xu Yilmaz Zimmermann"
)
TOOLS = [
    "PostgreSQL", "Redis", "Kafka", "RabbitMQ", "Elasticsearch", "OpenSearch", "Terraform", "Kubernetes", "Helm",
    "Argo CD", "GitHub Actions", "Jenkins", "Datadog", "Grafana", "Prometheus", "Sentry", "PagerDuty", "Vault",
    "Celery", "Django", "FastAPI", "React", "Next.js", "Spring Boot", "Snowflake", "dbt", "Airflow", "BigQuery",
    "Amazon S3", "CloudFront", "Cloudflare", "Stripe", "Adyen", "Twilio", "SendGrid", "Auth0", "Okta",
    "LaunchDarkly", "Segment", "Looker", "Metabase", "ClickHouse", "MongoDB", "DynamoDB", "Temporal", "Istio",
    "Envoy", "nginx", "Bazel", "Consul", "Nomad", "Pulsar", "Memcached", "Cassandra", "Flink", "Spark",
]  # fmt: skip
LANGUAGES = ["Python 3.12", "Go", "TypeScript", "Java 21", "Kotlin", "Rust", "Ruby", "Elixir", "C#", "Scala"]
FRAMEWORKS = ["Django", "FastAPI", "Spring Boot", "Express", "Rails", "Phoenix", "Gin", "Axum", "ASP.NET", "Ktor"]
DATASTORES = ["PostgreSQL", "MySQL", "MongoDB", "DynamoDB", "Cassandra", "ClickHouse", "Redis", "CockroachDB"]
QUEUES = ["Kafka", "RabbitMQ", "SQS", "Pulsar", "NATS", "Google Pub/Sub", "Redis Streams"]
OBSERVABILITY = ["Datadog", "Grafana", "New Relic", "Honeycomb", "Prometheus", "Sentry", "Splunk"]
PAGERS = ["PagerDuty", "Opsgenie", "incident.io", "VictorOps"]
CD_TOOLS = ["Argo CD", "Flux", "Spinnaker", "GitHub Actions", "Jenkins", "GitLab CI", "CircleCI", "Buildkite"]
ORCHESTRATORS = ["Kubernetes", "ECS", "Nomad", "Cloud Run", "bare EC2 instances"]
WAREHOUSES = ["Snowflake", "BigQuery", "Redshift", "Databricks", "ClickHouse"]
SECRET_STORES = ["Vault", "AWS Secrets Manager", "Google Secret Manager", "Doppler", "1Password Connect"]
LINTERS = ["ruff", "golangci-lint", "eslint", "clippy", "rubocop", "detekt", "checkstyle", "credo"]
CACHES = ["Redis", "Memcached", "a local LRU", "CloudFront", "Varnish"]
PROTOCOLS = ["gRPC", "REST", "GraphQL", "Thrift", "plain HTTP/JSON"]
ENVIRONMENTS = [
    "production", "staging", "the sandbox", "preprod", "the dev cluster", "the EU production cluster",
    "the US production cluster", "the load-test environment",
]  # fmt: skip
REGIONS = [
    "eu-west-1", "us-east-1", "ap-southeast-2", "eu-central-1", "us-west-2", "sa-east-1", "Frankfurt",
    "Dublin", "Virginia", "Singapore", "Tokyo", "Sao Paulo",
]  # fmt: skip
TIERS = [
    "enterprise customers", "free-tier users", "SMB accounts", "partners", "resellers", "internal users",
    "trial accounts", "premium subscribers", "government clients", "marketplace sellers", "education accounts",
]  # fmt: skip
CURRENCIES = ["EUR", "USD", "GBP", "CHF", "JPY", "BRL", "AUD", "CAD"]
CHANNELS = ["#incidents", "#eng-announce", "the status page", "email", "Slack", "the customer portal", "#ops"]
METRICS = [
    "p99 latency", "error rate", "checkout conversion", "queue depth", "CPU usage", "disk usage",
    "replication lag", "cache hit ratio", "chargeback rate", "signup rate", "memory usage", "consumer lag",
]  # fmt: skip
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = _split("January February March April May June July August September October November December")
REASONS = [
    "the licence cost doubled", "operational load was too high", "latency kept missing the SLO",
    "the vendor dropped support", "we needed multi-region replication", "nobody on the team knew it well",
    "an audit finding required it", "it could not keep up with peak traffic", "upgrades kept breaking",
]  # fmt: skip
FINDINGS = [
    "too immature for production", "slower on our workload", "too costly at our volume",
    "missing features we rely on", "hard to operate without a vendor contract",
]  # fmt: skip
PURPOSES = [
    "feature flags", "background jobs", "observability", "search", "secrets management", "CI", "event streaming",
    "data warehousing", "email delivery", "payments", "authentication", "caching",
]  # fmt: skip
TRADEOFFS = [
    "higher cost for less operational work", "less flexibility but simpler upgrades",
    "vendor lock-in in exchange for speed", "more code to own but no licence fees",
]  # fmt: skip
FLOWS = [
    "checkout", "login", "payouts", "invoicing", "order placement", "signup", "refunds", "search",
    "account deletion", "password reset",
]  # fmt: skip
FALLBACKS = ["cached results", "a read-only mode", "a static price list", "queued retries", "manual review"]
ENTITIES = ["product", "customer", "price", "session", "exchange rate", "permission", "catalog", "shipping zone"]
JOBS = ["nightly export", "reindex", "reconciliation", "cleanup", "backfill", "report", "archive", "sync"]
PII = ["card numbers", "email addresses", "home addresses", "passport scans", "phone numbers", "IBANs"]
FOCUS = ["correctness", "naming", "tests", "error handling", "API design", "performance", "security"]
TOPICS = ["billing questions", "outage updates", "contract renewals", "security notices", "onboarding"]
SECRETS = ["signing", "API", "encryption", "webhook", "OAuth client", "database"]
LEGACY = ["Perl", "COBOL", "PHP 5", "Java 8", "mainframe", "spreadsheet-based", "VB6"]
STORAGE = ["Amazon S3", "Google Cloud Storage", "Azure Blob Storage", "MinIO"]
SCHEDULERS = ["Airflow", "Kubernetes CronJobs", "Temporal", "cron on the batch host", "Celery beat"]
TICKET_PREFIXES = _split("PAY OPS PLAT DATA SEC INFRA CORE RISK MOB WEB API FIN SRE LOG IAM OBS DEV QA")


class _Vocab:
    """One organization's names: its own services, people, teams and ticket keys."""

    def __init__(self, rng: random.Random, rows: int) -> None:
        n_services = min(len(SERVICES), 10 + rows // 100)
        self.services = rng.sample(SERVICES, n_services)
        people = [f"{f} {last}" for f in FIRST_NAMES for last in LAST_NAMES]
        self.people = rng.sample(people, min(len(people), 12 + rows // 200))
        self.teams = rng.sample(TEAMS, min(len(TEAMS), 6 + rows // 1000))
        self.ticket_prefixes = rng.sample(TICKET_PREFIXES, 4)


class _Slots(dict[str, str]):
    """Slot values for one memory, drawn on first use so a template reusing a slot stays consistent."""

    def __init__(self, rng: random.Random, vocab: _Vocab) -> None:
        super().__init__()
        self.rng = rng
        self.vocab = vocab

    def __missing__(self, key: str) -> str:
        value = self._draw(key.rstrip("0123456789"), key)
        self[key] = value
        return value

    def _draw(self, kind: str, key: str) -> str:
        rng, vocab = self.rng, self.vocab
        if kind in ("service", "tool", "datastore") and key[-1].isdigit():
            # service2 differs from service (and tool2 from tool).
            base = self[kind]
            for _ in range(10):
                value = self._draw(kind, kind)
                if value != base:
                    return value
            return value
        simple: dict[str, Sequence[str]] = {
            "service": vocab.services, "person": vocab.people, "team": vocab.teams, "tool": TOOLS,
            "lang": LANGUAGES, "framework": FRAMEWORKS, "datastore": DATASTORES, "queue": QUEUES,
            "observability": OBSERVABILITY, "pager": PAGERS, "cd": CD_TOOLS, "orchestrator": ORCHESTRATORS,
            "warehouse": WAREHOUSES, "secrets": SECRET_STORES, "linter": LINTERS, "cache": CACHES,
            "protocol": PROTOCOLS, "env": ENVIRONMENTS, "region": REGIONS, "tier": TIERS, "currency": CURRENCIES,
            "channel": CHANNELS, "metric": METRICS, "weekday": WEEKDAYS, "reason": REASONS, "finding": FINDINGS,
            "purpose": PURPOSES, "tradeoff": TRADEOFFS, "flow": FLOWS, "fallback": FALLBACKS, "entity": ENTITIES,
            "job": JOBS, "pii": PII, "focus": FOCUS, "topic": TOPICS, "secret": SECRETS, "legacy": LEGACY,
            "storage": STORAGE, "scheduler": SCHEDULERS,
        }  # fmt: skip
        if kind in simple:
            return rng.choice(simple[kind])
        durations = ["15 minutes", "30 minutes", "2 hours", "4 hours", "24 hours", "48 hours", "3 days", "7 days"]
        generated: dict[str, Callable[[], str]] = {
            "amount": lambda: f"{rng.choice([50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000]):,}",
            "percent": lambda: rng.choice(["0.5%", "1%", "2%", "3%", "5%", "10%", "15%", "20%", "80%", "99.9%"]),
            "duration": lambda: rng.choice([*durations, "14 days", "30 days", "90 days"]),
            "date": lambda: f"{rng.choice(MONTHS)} {rng.randint(1, 28)}, {rng.randint(2021, 2025)}",
            "quarter": lambda: f"Q{rng.randint(1, 4)} {rng.randint(2022, 2026)}",
            "ticket": lambda: f"{rng.choice(vocab.ticket_prefixes)}-{rng.randint(100, 9999)}",
            "number": lambda: str(rng.choice([2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 50, 64, 100, 200, 500])),
            "ms": lambda: str(rng.choice([50, 100, 150, 200, 250, 300, 500, 800, 1000, 2000])),
            "time": lambda: f"{rng.randint(0, 23):02d}:{rng.choice(['00', '15', '30', '45'])}",
            "version": lambda: f"{rng.randint(1, 14)}.{rng.randint(0, 9)}",
        }
        if kind in generated:
            return generated[kind]()
        raise KeyError(key)


@dataclass(frozen=True)
class Template:
    memory_type: str
    text: str
    questions: tuple[str, ...]
    topic: str  # a few words a keyword search for this kind of memory would use


def _t(memory_type: str, text: str, topic: str, *questions: str) -> Template:
    return Template(memory_type, text, questions, topic)


TEMPLATES = [
    # business rules
    _t("business_rule", "Refunds above {amount} {currency} for {tier} must be approved by the {team} team before "
       "{service} issues them.", "refund approval",
       "who has to approve refunds over {amount} {currency} for {tier}?", "do large refunds need approval?"),
    _t("business_rule", "Invoices for {tier} are due {duration} after issue; after that {service} sends a reminder "
       "through {channel}.", "invoice due reminder", "when are invoices for {tier} due?",
       "how are {tier} reminded about unpaid invoices?"),
    _t("business_rule", "Accounts with a chargeback rate over {percent} are frozen automatically by {service} and "
       "reviewed by {team}.", "chargeback freeze", "what happens when the chargeback rate goes above {percent}?"),
    _t("business_rule", "Discounts larger than {percent} on contracts with {tier} need sign-off from {person} in "
       "{team}.", "discount sign-off", "who signs off discounts above {percent} for {tier}?"),
    _t("business_rule", "{tier} are limited to {number} thousand API calls per day; {service} answers HTTP 429 past "
       "that limit.", "api rate limit", "what is the daily API limit for {tier}?", "why does {service} return 429?"),
    _t("business_rule", "Personal data of {tier} in {region} must stay in {region}; {service} may not replicate it "
       "to other regions.", "data residency", "can {service} copy personal data out of {region}?"),
    _t("business_rule", "Orders over {amount} {currency} are held for manual fraud review by {team} for up to "
       "{duration}.", "fraud review hold", "how long are big orders held for fraud review?"),
    _t("business_rule", "Customers in {region} are billed in {currency}; {service} converts prices at the rate fixed "
       "on the first business day of the month.", "billing currency conversion",
       "which currency do we bill customers in {region} in?"),
    _t("business_rule", "Payouts to {tier} run every {weekday} at {time} UTC from {service}; anything submitted "
       "later waits for the next run.", "payout schedule", "when do payouts to {tier} run?"),
    _t("business_rule", "Accounts of {tier} that stay inactive for {duration} are archived by {service}, and their "
       "exports are kept in {storage}.", "inactive account archive", "what happens to inactive {tier} accounts?"),
    # decisions
    _t("decision_log", "On {date} we decided to move {service} from {tool} to {tool2} because {reason}.",
       "migration decision", "why did we move {service} off {tool}?", "when did {service} switch to {tool2}?"),
    _t("decision_log", "Decision from {date}: {service} stays on {tool}; {person} evaluated {tool2} and found it "
       "{finding}.", "tool evaluation", "did we evaluate {tool2} for {service}?"),
    _t("decision_log", "{team} agreed on {date} that {service} will be split out of the monolith by {quarter}, owned "
       "by {person}.", "monolith split", "when will {service} be split out of the monolith?"),
    _t("decision_log", "We chose {tool} over {tool2} for {purpose} in {quarter}; the trade-off was {tradeoff}.",
       "technology choice", "why do we use {tool} for {purpose}?", "{tool} or {tool2} for {purpose}?"),
    _t("decision_log", "After the outage on {date} we decided that every {service} deploy gets a canary in {env} "
       "for at least {duration}.", "canary deploy policy", "how long does a {service} canary run?"),
    _t("decision_log", "The {team} team decided to retire the v1 endpoints of {service} on {date}; clients have "
       "until {quarter} to migrate.", "api deprecation", "when are the v1 endpoints of {service} retired?"),
    _t("decision_log", "Decision record {ticket}: {service} will write to {datastore} directly instead of going "
       "through {service2}.", "write path decision", "does {service} still write through {service2}?"),
    # conventions
    _t("convention", "Branch names in the {service} repository start with the ticket key, like "
       "{ticket}-short-description; CI in {cd} rejects other names.", "branch naming",
       "how should I name branches for {service}?"),
    _t("convention", "All {lang} code in {service} must pass {linter} before merge; the check runs in {cd}.",
       "lint before merge", "which linter does {service} use?"),
    _t("convention", "Database migrations for {service} must stay backwards compatible for one release; {person} "
       "reviews every migration touching {datastore}.", "migration review",
       "who reviews database migrations for {service}?"),
    _t("convention", "Every public endpoint of {service} needs an OpenAPI description and an owner in the {team} "
       "service catalog.", "openapi ownership", "what does a new {service} endpoint need?"),
    _t("convention", "Log lines in {service} are structured JSON with a trace_id field and are shipped to "
       "{observability}.", "structured logging", "where do {service} logs go?"),
    _t("convention", "Feature flags in {service} are named after the owning team and must be removed within "
       "{duration} of full rollout.", "feature flag cleanup", "when must old feature flags in {service} be removed?"),
    _t("convention", "Pull requests touching {service} need two approvals, one of them from {team}; {person} is the "
       "default reviewer.", "pull request approvals", "who needs to approve pull requests for {service}?"),
    _t("convention", "Timestamps are stored in UTC in {datastore} and converted to local time only in {service}.",
       "utc timestamps", "are timestamps stored in UTC?"),
    _t("convention", "Errors returned by {service} use problem details with a stable code; the list of codes lives "
       "in the {team} wiki.", "error codes", "where is the list of {service} error codes?"),
    # facts
    _t("fact", "{service} runs in {env} in {region} on {number} pods with {number2} GB of memory each.",
       "pods memory capacity", "how many pods does {service} run in {region}?", "{service} capacity in {env}"),
    _t("fact", "{service} is owned by the {team} team; the on-call rotation is in {pager} and {person} is the "
       "escalation contact.", "owner on-call", "who owns {service}?", "who is on call for {service}?"),
    _t("fact", "The {service} database on {datastore} holds about {number} million rows and grows by {percent} a "
       "month.", "database size growth", "how big is the {service} database?"),
    _t("fact", "{service} handles roughly {number} thousand requests per minute at peak, usually on {weekday} "
       "around {time} UTC.", "peak traffic", "when is peak traffic for {service}?"),
    _t("fact", "Our contract with {tool} renews on {date}; the annual cost is {amount} {currency} and {person} "
       "negotiates it.", "vendor contract renewal", "when does the {tool} contract renew?"),
    _t("fact", "{person} joined {team} on {date} and is the main contact for questions about {service}.",
       "main contact", "who should I ask about {service}?"),
    _t("fact", "The staging copy of {service} is refreshed from production every {weekday} with anonymised data.",
       "staging refresh", "how often is staging data for {service} refreshed?"),
    _t("fact", "{service} depends on {service2} for {flow}; if {service2} is down, {service} falls back to "
       "{fallback}.", "dependency fallback", "what happens to {service} when {service2} is down?"),
    _t("fact", "The SLA for {tier} promises {percent} monthly uptime for {service}.", "sla uptime",
       "what uptime do we promise {tier} for {service}?"),
    _t("fact", "{service} went live in {quarter} and replaced the old {legacy} system that handled {flow}.",
       "legacy replacement", "what did {service} replace?"),
    # risks
    _t("risk", "Risk: {service} has a single {datastore} primary in {region}; a regional outage would stop {flow} "
       "for up to {duration}.", "single point of failure", "what happens to {flow} if {region} goes down?"),
    _t("risk", "The TLS certificate for {service} expires on {date}; renewal is manual and owned by {person}.",
       "certificate expiry", "when does the {service} certificate expire?"),
    _t("risk", "{service} still runs {tool} {version}, which reaches end of life in {quarter}; the upgrade is "
       "tracked in {ticket}.", "end of life upgrade", "which {tool} version does {service} run?"),
    _t("risk", "Known risk: the {job} job of {service} can overlap with backups on {datastore} and double the "
       "{metric}.", "job overlaps backup", "why does {metric} spike during backups?"),
    _t("risk", "If {service2} is slow, retries from {service} amplify the load; the circuit breaker opens at "
       "{percent} errors.", "retry storm circuit breaker", "when does the {service} circuit breaker open?"),
    _t("risk", "Only {person} knows how to rotate the {secret} keys for {service}; writing the procedure down is "
       "{ticket}.", "key rotation bus factor", "who can rotate the {secret} keys of {service}?"),
    _t("risk", "The {region} cluster is at {percent} disk usage; {service} logs could fill it within {duration}.",
       "disk full", "is the {region} cluster running out of disk?"),
    _t("risk", "A security review found that {service} logs full request bodies, which may contain {pii}.",
       "pii in logs", "does {service} log {pii}?"),
    # tech stack
    _t("tech_stack", "{service} is written in {lang} with {framework}, stores its data in {datastore} and publishes "
       "events to {queue}.", "language framework", "what is {service} written in?",
       "which queue does {service} publish to?"),
    _t("tech_stack", "We deploy {service} with {cd} to {orchestrator} in {env}; container images are built on every "
       "merge.", "deploy pipeline", "how do we deploy {service}?"),
    _t("tech_stack", "Monitoring for {service} lives in {observability}; alerts page {team} through {pager} when "
       "{metric} crosses its threshold.", "monitoring alerts", "how is {service} monitored?"),
    _t("tech_stack", "{service} caches {entity} data in {cache} for {duration}; the cache is warmed after every "
       "deploy.", "cache ttl", "how long does {service} cache {entity} data?"),
    _t("tech_stack", "Secrets for {service} live in {secrets} and are injected at start-up; nothing is read from "
       "environment files.", "secrets storage", "where are the secrets for {service} stored?"),
    _t("tech_stack", "{service} talks to {service2} over {protocol} with mutual TLS; the timeout is {ms} ms with "
       "{number} retries.", "timeout retries", "what timeout does {service} use for {service2}?"),
    _t("tech_stack", "Analytics events from {service} flow through {queue} into {warehouse}, where {team} models "
       "them.", "analytics events warehouse", "where do analytics events from {service} end up?"),
    # preferences
    _t("preference", "{person} prefers written design docs over meetings for changes to {service}; send them "
       "{duration} ahead.", "design docs", "how does {person} like to review changes?"),
    _t("preference", "The {team} team prefers {tool} for dashboards and asks that new {service} metrics go there, "
       "not to {tool2}.", "dashboards", "where should new {service} dashboards go?"),
    _t("preference", "{person} wants incident summaries for {service} posted in {channel} within {duration} of "
       "resolution.", "incident summary", "where do incident summaries for {service} go?"),
    _t("preference", "For {service} the team prefers small daily releases; avoid deploying after {time} on "
       "{weekday}.", "release timing", "when should we not deploy {service}?"),
    _t("preference", "{person} wants code reviews to focus on {focus} first and leaves style issues to {linter}.",
       "code review focus", "what does {person} look for in code reviews?"),
    _t("preference", "{tier} prefer email over phone for {topic}; support answers them through {channel}.",
       "contact preference", "how do {tier} want to be contacted about {topic}?"),
    # architecture, constraints, documentation, tasks
    _t("architecture", "{service} reads from a replica of {datastore}; writes go to the primary in {region}, so "
       "read-after-write goes through {service2}.", "read replica", "does {service} read from a replica?"),
    _t("system_constraint", "Payloads sent to {service} may not exceed {number} MB; larger files go to {storage} "
       "and are passed by URL.", "payload size limit", "what is the maximum payload size for {service}?"),
    _t("system_constraint", "{service} must answer within {ms} ms at p99 because {service2} calls it synchronously "
       "during {flow}.", "latency budget", "what is the latency budget of {service}?"),
    _t("documentation", "The failover runbook for {service} is in the {team} wiki; {person} last tested it on "
       "{date}.", "failover runbook", "where is the {service} failover runbook?"),
    _t("documentation", "To rebuild the {entity} index of {service}, run the {job} job in {env}; it takes about "
       "{duration}.", "rebuild index", "how do I rebuild the {entity} index?"),
    _t("system_constraint", "Batch jobs in {service} must be idempotent because {scheduler} may run them twice "
       "after a node failure.", "idempotent jobs", "why must {service} jobs be idempotent?"),
    _t("architecture", "Only {team} may change the {datastore} schema of {service}; other teams open a ticket like "
       "{ticket}.", "schema ownership", "who can change the {service} schema?"),
    _t("task", "{person} is migrating {service} to {tool2} this quarter; the cutover is planned for {date}.",
       "migration cutover", "when is the {service} cutover?"),
    _t("task", "Follow-up from {ticket}: add alerting on {metric} for {service} in {env} before {date}.",
       "alerting follow-up", "is there alerting on {metric} for {service}?"),
]  # fmt: skip

CLAUSES = [
    "Agreed with {person} on {date}.",
    "See {ticket} for the details.",
    "Raised in the {team} retro in {quarter}.",
    "This applies to {env} only.",
    "{person} is the point of contact.",
    "To be reviewed again in {quarter}.",
    "Confirmed in the incident review of {date}.",
    "Documented in the {team} handbook.",
    "Exceptions need approval from {person}.",
    "Enforced by a check in {cd}.",
    "The background is in the {quarter} planning notes.",
    "Last verified by {person} in {quarter}.",
]

LEAD_INS = ["Heads-up: ", "Note for agents: ", "Important: ", "For context: ", "Reminder: ", "As of {quarter}: "]

# Why a memory exists or how far to trust it, by kind (appended to about half of them).
RATIONALES = {
    "business_rule": [
        "Finance asked for this after the {quarter} audit.",
        "Legal requires it for customers in {region}.",
        "It was introduced after a {amount} {currency} loss in {quarter}.",
        "Support gets many tickets about it, so answer customers precisely.",
    ],
    "decision_log": [
        "The alternative was to keep {tool} and add more capacity.",
        "{person} wrote the proposal and {team} reviewed it.",
        "Cost was the deciding factor.",
        "We expect to revisit this when traffic doubles.",
    ],
    "convention": [
        "New joiners often miss this one.",
        "Reviewers block pull requests that ignore it.",
        "The {linter} configuration enforces part of it.",
    ],
    "fact": [
        "The figures come from the {observability} dashboard of {date}.",
        "This changes often, so check before relying on it.",
        "{person} confirmed it last {weekday}.",
    ],
    "risk": [
        "Likelihood is low but the impact would be severe.",
        "Mitigation is planned for {quarter}.",
        "{person} raised it during the {quarter} risk review.",
    ],
    "tech_stack": [
        "Local development uses docker compose with the same versions.",
        "Versions are pinned in the {service} repository.",
    ],
    "preference": [
        "It was asked for explicitly, so please respect it.",
        "This is a personal preference, not a policy.",
    ],
}

GENERAL_QUESTIONS = [
    "who owns {service}?",
    "what database does {service} use?",
    "how do we deploy {service}?",
    "what are the known risks around {service}?",
    "what did {team} decide about {tool}?",
    "which services run in {region}?",
    "how is {service} monitored?",
    "what are the rules for {tier}?",
    "what does {person} work on?",
    "what is the on-call setup for {team}?",
    "anything I should know before changing {service}?",
    "which decisions were made in {quarter}?",
]

MIN_WORDS, MAX_WORDS = 15, 40


@dataclass(frozen=True)
class SyntheticMemory:
    text: str
    memory_type: str
    template: int
    slots: dict[str, str]
    scope_type: str = "organization"
    repository: str | None = None
    status: str = "active"
    importance: int = 3
    tags: tuple[str, ...] = ()

    def entry(self) -> dict[str, Any]:
        """The memory as a memory_batch_create / memory_create entry."""
        return {
            "scope_type": self.scope_type,
            "memory_type": self.memory_type,
            "current_content": self.text,
            "status": self.status,
            "importance": self.importance,
            "tags": list(self.tags),
            "metadata": {"bench": "synthetic", "template": self.template},
            # The synthetic agent sets its organization up as it goes: a repository it names is created.
            **({"repository": self.repository, "create_repository": True} if self.repository else {}),
        }


@dataclass
class Tenant:
    slug: str
    role: str  # large, medium, small, tiny, micro
    rows: int
    memories: list[SyntheticMemory] = field(default_factory=list)


def _capitalized(text: str) -> str:
    """Sentence case, except a leading service name (they are lower-case-with-dashes)."""
    if "-" in text.split(" ", 1)[0]:
        return text
    return text[0].upper() + text[1:]


def _words(text: str) -> int:
    return len(text.split())


def _subject(template: Template) -> str:
    """The slot a template is about: its service if it names one, else its first slot."""
    fields = [name for _, name, _, _ in string.Formatter().parse(template.text) if name]
    return "service" if "service" in fields else fields[0]


SUBJECTS = [_subject(template) for template in TEMPLATES]


def _memory(
    rng: random.Random, vocab: _Vocab, seen: set[str], subjects: set[tuple[Any, ...]], system: bool = False
) -> SyntheticMemory:
    """One memory. An organization states a given kind of thing about a given subject once (a second
    rule on feature flags in billing-api would be a near-duplicate); when that is taken, the memory
    pairs two statements about the subject, else another template is drawn."""
    for attempt in range(60):
        index = rng.randrange(len(TEMPLATES))
        template = TEMPLATES[index]
        slots = _Slots(rng, vocab)
        text = template.text.format_map(slots)
        key: tuple[Any, ...] = (index, slots[SUBJECTS[index]])
        if key in subjects or rng.random() < 0.15:
            other = rng.randrange(len(TEMPLATES))
            paired = f"{text} {_capitalized(TEMPLATES[other].text.format_map(slots))}"
            if other != index and _words(paired) <= MAX_WORDS:
                text, key = paired, (*key, other)
        if key in subjects and attempt < 50:
            continue
        lead_in = rng.choice(LEAD_INS).format_map(slots)
        if rng.random() < 0.2 and _words(lead_in + text) <= MAX_WORDS:
            text = lead_in + text
        text = _capitalized(text)
        rationales = RATIONALES.get(template.memory_type, [])
        if rationales and rng.random() < 0.5 and _words(text) < MAX_WORDS - 8:
            text = f"{text} {rng.choice(rationales).format_map(slots)}"
        extra = rng.random()
        clauses = 2 if extra < 0.15 else 1 if extra < 0.6 else 0
        for clause in rng.sample(CLAUSES, clauses):
            candidate = f"{text} {clause.format_map(slots)}"
            if _words(candidate) <= MAX_WORDS:
                text = candidate
        while _words(text) < MIN_WORDS:
            text = f"{text} {rng.choice(CLAUSES).format_map(slots)}"
        if text in seen:
            continue  # an exact duplicate: draw again
        seen.add(text)
        subjects.add(key)
        scope, repository = "organization", None
        if system:
            scope = "system"
        elif rng.random() < 0.25:
            scope, repository = "repository", slots["service"] if "service" in slots else rng.choice(vocab.services)
        status = rng.choices(["active", "draft", "verified", "deprecated"], weights=[60, 20, 18, 2])[0]
        return SyntheticMemory(
            text=text,
            memory_type=template.memory_type,
            template=index,
            slots=dict(slots),
            scope_type=scope,
            repository=repository,
            status=status,
            importance=rng.choices(range(1, 11), weights=[8, 10, 14, 14, 14, 12, 10, 8, 6, 4])[0],
            tags=tuple(sorted(set(rng.sample(template.topic.split(), min(2, len(template.topic.split())))))),
        )
    raise RuntimeError("the vocabulary is too small for this many distinct memories")


SYSTEM_MEMORIES = 20


def plan_tenants(total: int) -> list[Tenant]:
    """Tenant sizes for ``total`` memories: 50% large, 4 x 6% medium, 1% tiny, 50 rows, 40 small ones."""
    large = round(total * 0.50)
    medium = [round(total * 0.06)] * 4
    tiny = max(round(total * 0.01), 60)
    micro = 50
    rest = total - large - sum(medium) - tiny - micro
    if rest < 40:
        raise SystemExit(f"--memories {total} is too small for the tenant mix; use at least 5000")
    rng = random.Random(f"plan:{total}")
    weights = [rng.uniform(0.3, 1.7) for _ in range(40)]
    small = [max(1, int(rest * w / sum(weights))) for w in weights]
    small[0] += rest - sum(small)
    tenants = [Tenant("bench-large", "large", large)]
    tenants += [Tenant(f"bench-medium-{i + 1}", "medium", rows) for i, rows in enumerate(medium)]
    tenants += [Tenant("bench-tiny", "tiny", tiny), Tenant("bench-micro", "micro", micro)]
    tenants += [Tenant(f"bench-small-{i + 1:02d}", "small", rows) for i, rows in enumerate(small)]
    return tenants


def build_corpus(total: int, seed: int = 7) -> list[Tenant]:
    """The tenants with their memories; the large one's first SYSTEM_MEMORIES are system scope."""
    tenants = plan_tenants(total)
    seen: set[str] = set()
    for tenant in tenants:
        rng = random.Random(f"{seed}:{tenant.slug}")
        vocab = _Vocab(rng, tenant.rows)
        system = SYSTEM_MEMORIES if tenant.role == "large" else 0
        subjects: set[tuple[Any, ...]] = set()
        tenant.memories = [_memory(rng, vocab, seen, subjects, system=i < system) for i in range(tenant.rows)]
    return tenants


def tenant_queries(tenant: Tenant, count: int, seed: int = 7, sources: list[str | None] | None = None) -> list[str]:
    """Questions an agent of this tenant would ask: half paraphrase one of its memories, a quarter are
    keyword-ish (a topic and a name or two), a quarter general questions about its services and people.
    ``sources``, when given, gets each question's paraphrased memory text (None for the others)."""
    rng = random.Random(f"{seed}:queries:{tenant.slug}")
    vocab = _Vocab(random.Random(f"{seed}:{tenant.slug}"), tenant.rows)  # the tenant's own names
    queries = []
    for _ in range(count):
        memory = rng.choice(tenant.memories)
        template = TEMPLATES[memory.template]
        kind = rng.random()
        if kind < 0.5:
            slots = _Slots(rng, vocab)
            slots.update(memory.slots)
            query = rng.choice(template.questions).format_map(slots)
            source: str | None = memory.text
        elif kind < 0.75:
            names = [v for k, v in memory.slots.items() if k.rstrip("0123456789") in _KEYWORD_SLOTS]
            picked = rng.sample(names, min(len(names), rng.randint(1, 2)))
            query = " ".join([*picked, template.topic])
            source = None
        else:
            query = rng.choice(GENERAL_QUESTIONS).format_map(_Slots(rng, vocab))
            source = None
        queries.append(_capitalized(query))
        if sources is not None:
            sources.append(source)
    return queries


_KEYWORD_SLOTS = {"service", "tool", "team", "person", "ticket", "region", "tier", "datastore", "lang", "env"}


# --- ingest ------------------------------------------------------------------------------------


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def embedded_texts(memories: Sequence[SyntheticMemory]) -> list[str]:
    """What the service embeds for these memories (the derived title leads unless cut from the text)."""
    from memories import validation
    from memories.embedding_pipeline import embedding_text

    return [embedding_text(validation.derive_title(m.text), m.text) for m in memories]


class EmbedTimer:
    """Times the provider's embed calls made inside the service (the rest of a write is the database):
    wall time and this process's CPU time (onnxruntime's threads included)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        self.texts = 0
        self.calls = 0

    def __enter__(self) -> EmbedTimer:
        from memories.embeddings import get_provider

        self.provider = get_provider()
        self.original: Callable[[Sequence[str]], list[list[float]]] = self.provider.embed
        original = self.original

        def timed(texts: Sequence[str]) -> list[list[float]]:
            started, cpu_started = time.perf_counter(), time.process_time()
            try:
                return original(texts)
            finally:
                self.seconds += time.perf_counter() - started
                self.cpu_seconds += time.process_time() - cpu_started
                self.texts += len(texts)
                self.calls += 1

        self.provider.embed = timed  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        del self.provider.embed


def create_organizations(tenants: Sequence[Tenant]) -> dict[str, Any]:
    """One organization per tenant; returns an operator principal for each (it may write system scope)."""
    from organizations.principal import Principal
    from organizations.services import organization_create

    principals = {}
    for tenant in tenants:
        organization = organization_create(slug=tenant.slug, name=f"{tenant.role} ({tenant.rows})", operator="bench")
        principals[tenant.slug] = Principal.for_operator(organization, "bench")
    return principals


def batch_ingest(
    tenants: Sequence[Tenant], batch_size: int, raw_every: int = 8, seed: int = 7, progress: bool = True
) -> dict[str, Any]:
    """Every tenant's memories through memory_batch_create, batches of all tenants interleaved (as
    concurrent writers would), timed, with the embedding part of that time measured on its own.

    Every ``raw_every``-th batch is then embedded again with the provider alone (off the ingest
    clock): the raw embedding throughput on the same texts, in batches of the same size, under the
    same load as the ingest around it (the machine may be shared; load drifts during a long run).
    """
    from django.db import connection
    from tqdm import tqdm

    from memories.batch import memory_batch_create
    from memories.embeddings import get_provider

    principals = create_organizations(tenants)
    batches = [(t.slug, list(batch)) for t in tenants for batch in chunks(t.memories, batch_size)]
    random.Random(f"{seed}:order").shuffle(batches)
    total = sum(len(batch) for _, batch in batches)
    bar = tqdm(total=total, desc="ingest", unit="mem", file=sys.stderr, disable=not progress, smoothing=0.05)
    batch_seconds: list[float] = []
    raw = {"texts": 0, "seconds": 0.0, "cpu": 0.0, "ingest_seconds": 0.0}
    statements = 0

    def count(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        nonlocal statements
        statements += 1
        return execute(sql, params, many, context)

    embed = get_provider().embed
    with CpuMeter(backend_pid()) as cpu:
        cpu_started = time.process_time()
        for number, (slug, batch) in enumerate(batches):
            entries = [m.entry() for m in batch]
            with connection.execute_wrapper(count):
                batch_started = time.perf_counter()
                results = memory_batch_create(principal=principals[slug], entries=entries)
                batch_seconds.append(time.perf_counter() - batch_started)
            failed = [r for r in results if not r.ok]
            if failed:
                raise RuntimeError(f"batch ingest refused entry {failed[0].index}: {failed[0].error}")
            if number % raw_every == 0:
                texts = embedded_texts(batch)
                raw_started, raw_cpu = time.perf_counter(), time.process_time()
                embed(texts)
                raw["seconds"] += time.perf_counter() - raw_started
                raw["cpu"] += time.process_time() - raw_cpu
                raw["texts"] += len(texts)
                raw["ingest_seconds"] += batch_seconds[-1]
            bar.update(len(batch))
        bench_cpu = time.process_time() - cpu_started - raw["cpu"]
    bar.close()
    seconds = sum(batch_seconds)
    tenth = max(1, len(batch_seconds) // 10)
    first, last = sum(batch_seconds[:tenth]), sum(batch_seconds[-tenth:])
    raw_per_s = raw["texts"] / raw["seconds"]
    raw_cpu_per_text = raw["cpu"] / raw["texts"]
    postgres_cpu = cpu.result.get("postgres_cores", 0.0) * cpu.wall
    return {
        "memories": total,
        "batch_size": batch_size,
        "seconds": round(seconds, 1),
        "memories_per_s": round(total / seconds, 1),
        "raw_embed_per_s": round(raw_per_s, 1),
        "ratio": round(total / seconds / raw_per_s, 3),
        "raw_embed_sample": raw["texts"],
        # The same ratio on the sampled batches alone (each ingest batch against its own raw re-embedding).
        "ratio_sampled_batches": round(raw["seconds"] / raw["ingest_seconds"], 3),
        # Load-independent costs: SQL statements, and CPU per memory. Embedding and writing overlap,
        # so the embedding's share of the ingest CPU is estimated from the raw re-embeddings (CPU per
        # text); the rest is the writes' Python.
        "statements_per_memory": round(statements / total, 2),
        "embed_cpu_ms_per_memory": round(raw_cpu_per_text * 1000, 3),
        "python_cpu_ms_per_memory": round((bench_cpu / total - raw_cpu_per_text) * 1000, 3),
        "postgres_cpu_ms_per_memory": round(postgres_cpu / total * 1000, 3),
        # Does a write get slower as the table (and its HNSW graph) grows? (Load drift shows here too.)
        "first_tenth_per_s": round(sum(len(b) for _, b in batches[:tenth]) / first, 1),
        "last_tenth_per_s": round(sum(len(b) for _, b in batches[-tenth:]) / last, 1),
        "cpu": cpu.result,
    }


def single_writes(tenant: Tenant, memories: Sequence[SyntheticMemory], principal: Any) -> dict[str, Any]:
    """memory_create one memory at a time (each embeds its own text)."""
    from memories.services import memory_create

    started = time.perf_counter()
    for memory in memories:
        data = memory.entry()
        memory_create(principal=principal, data=data, create_repository=data.pop("create_repository", False))
    seconds = time.perf_counter() - started
    return {"memories": len(memories), "memories_per_s": round(len(memories) / seconds, 1)}


def analyze() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def measure_ingest(
    tenants: Sequence[Tenant], batch_size: int, raw_every: int = 8, seed: int = 7, progress: bool = True
) -> dict[str, Any]:
    """Batch ingest against raw embedding throughput (see batch_ingest), then ANALYZE."""
    from memories.embeddings import get_provider

    get_provider().embed(embedded_texts(tenants[0].memories[:batch_size]))  # model loaded and warm
    result = batch_ingest(tenants, batch_size, raw_every=raw_every, seed=seed, progress=progress)
    analyze()
    return result


def ingest_table(title: str, ingest: dict[str, Any]) -> None:
    print_table(
        title,
        ["memories", "batch", "ingest/s", "raw embed/s", "ratio", "cores busy", "seconds"],
        [
            [
                ingest["memories"],
                ingest["batch_size"],
                ingest["memories_per_s"],
                ingest["raw_embed_per_s"],
                ingest["ratio"],
                ingest["cpu"].get("busy_cores"),
                ingest["seconds"],
            ]
        ],
    )
    if "ratio_sampled_batches" in ingest:
        print(
            f"  raw embedding re-measured on {ingest['raw_embed_sample']} of the texts, interleaved with the ingest; "
            f"on those batches alone ingest/raw = {ingest['ratio_sampled_batches']}"
        )
    if "statements_per_memory" in ingest:
        print(
            f"  per memory: {ingest['statements_per_memory']} SQL statements; CPU ms outside the embedding: "
            f"python {ingest['python_cpu_ms_per_memory']}, postgres {ingest['postgres_cpu_ms_per_memory']}; "
            f"embedding CPU ms (from the raw runs) {ingest['embed_cpu_ms_per_memory']}"
        )
    cpu = ingest["cpu"]
    print(
        f"  ingest first/last tenth: {ingest['first_tenth_per_s']}/{ingest['last_tenth_per_s']} mem/s; "
        f"cores busy {cpu.get('busy_cores')} (bench {cpu.get('bench_cores')}, postgres {cpu.get('postgres_cores')}, "
        f"other work {cpu.get('other_cores')}), load {cpu['loadavg_1m_before']} -> {cpu['loadavg_1m_after']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=20000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--raw-every", type=int, default=8, help="Re-embed every Nth batch raw (the raw rate).")
    parser.add_argument("--single-sample", type=int, default=300, help="Memories written one by one.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()

    tenants = build_corpus(args.memories, args.seed)
    extra = build_corpus(args.memories, args.seed + 1)[0].memories[: args.single_sample]
    with scratch_database("ingest"):
        ingest = measure_ingest(tenants, args.batch_size, args.raw_every, args.seed)
        from organizations.models import Organization
        from organizations.principal import Principal

        principal = Principal.for_operator(Organization.objects.get(slug=tenants[0].slug), "bench")
        single = single_writes(tenants[0], extra, principal)
    ingest["single_write_per_s"] = single["memories_per_s"]
    ingest["single_write_sample"] = single["memories"]

    ingest_table(f"Ingest through the service layer ({args.memories} memories)", ingest)
    print(f"  single writes (memory_create, {single['memories']} memories): {single['memories_per_s']} mem/s")
    write_json(args.json_out, {"benchmark": "ingest", **ingest})


if __name__ == "__main__":
    main()
