"""Credentials are found by kind and line, redacted in place, and named without their value."""

from __future__ import annotations

import pytest

from screening import find_secrets, redact_secrets
from screening.secrets import REDACTION
from tests.trust.attacks import CREDENTIALS, secret_part


@pytest.mark.parametrize("kind", sorted(CREDENTIALS))
def test_every_kind_is_found_where_it_is(kind: str) -> None:
    credential = CREDENTIALS[kind]
    text = f"Deploy notes.\nUse this for the release: {credential}\nThen tag the build."

    [finding] = find_secrets(text)

    assert finding.kind == kind
    assert finding.line == 2
    assert secret_part(credential) in text[finding.start : finding.end]


@pytest.mark.parametrize("kind", sorted(CREDENTIALS))
def test_redaction_replaces_the_whole_credential_and_keeps_the_lines(kind: str) -> None:
    credential = CREDENTIALS[kind]
    text = f"before\nkey: {credential}\nafter"

    redacted = redact_secrets(text)

    assert secret_part(credential) not in redacted
    assert REDACTION.format(kind=kind) in redacted
    assert redacted.count("\n") == text.count("\n")
    assert redacted.startswith("before\n") and redacted.endswith("\nafter")


@pytest.mark.parametrize(
    "text",
    [
        "No deploys on Friday after 14:00 UTC.",
        "Fixed in commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39.",
        "Memory 550e8400-e29b-41d4-a716-446655440000 supersedes this one.",
        "The password field must be at least 12 characters.",
        "Password: rotate every 90 days.",
        "Set API_KEY in the environment, never in code.",
        "secret: the deploy key lives in Vault at secret/payments",
        "Our secret sauce: shipping small pull requests.",
        "The staging host is eu-west-1.staging.internal, port 5432.",
        "password = request.POST['password']",
        "Call get_secret_key() and pass it to hmac.new(key, msg, sha256).",
    ],
)
def test_prose_and_pointers_to_secrets_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == []


def test_a_private_key_is_one_finding_from_its_first_line_to_its_last() -> None:
    key = CREDENTIALS["Private Key"]
    text = f"id_rsa of the deploy user:\n{key}\nRotate it yearly."

    [finding] = find_secrets(text)

    assert text[finding.start : finding.end] == key
    assert redact_secrets(text).splitlines()[1] == "[REDACTED: Private Key]"


def test_a_configuration_value_counts_only_when_it_reads_as_a_password() -> None:
    assert [f.kind for f in find_secrets("DB_PASSWORD=hunter2isgreat")] == ["Secret Keyword"]
    assert find_secrets("DB_PASSWORD=changeme") == []  # a word, not a password: too easy to find to be one


def test_code_files_are_read_by_their_own_language_rules() -> None:
    code = 'password1 = forms.CharField(label="Password")\nsecret = settings.SECRET_KEY\n'

    assert find_secrets(code, filename="app/forms.py") == []
    assert [f.kind for f in find_secrets('api_key = "d41d8cd98f00b204e9800998ecf8427e"', filename="app/x.py")]
    assert [f.kind for f in find_secrets("DB_PASSWORD=hunter2isgreat", filename="deploy/.env")] == ["Secret Keyword"]


def test_long_lines_are_read_around_what_could_be_a_secret() -> None:
    filler = "The release train leaves every Tuesday and nobody pushes to main without review. " * 40
    credential = CREDENTIALS["GitHub Token"]

    [finding] = find_secrets(f"{filler}token {credential} {filler}")

    assert finding.kind == "GitHub Token"
