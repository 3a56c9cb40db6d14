"""The scanner is skipped only where it could find nothing: the same findings with and without the
quick check, on prose, configuration, code and every credential kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from screening import secrets
from tests.trust.attacks import CREDENTIALS

SAMPLES = Path(__file__).resolve().parent.parent / "code_index" / "samples"


# The shortest tokens a detector knows by their form alone (Artifactory's password and API token).
SHORTEST = ["The build reads AP6x1Y2z3W4 from the vault.", "Mirror token AKCa1b2c3d4e5 rotates monthly."]


def test_the_shortest_tokens_are_found() -> None:
    for text in SHORTEST:
        assert [finding.kind for finding in secrets.find_secrets(text)] == ["Artifactory Credentials"]


def _texts() -> list[str]:
    texts = [f"Use {credential} here." for credential in CREDENTIALS.values()]
    texts += [f"key = '{credential}'" for credential in CREDENTIALS.values()]
    texts += [
        "DB_PASSWORD=hunter2isgreat\nAPI_TOKEN: 'x9Fk2LmQ7pQ'\nsecret = \"9f86d081884c7d659a2feaa0c55ad015\"",
        "postgres://app:s3cretPassw0rd@db:5432/main and mysql://root@db",
        "Run `npm config set //registry.npmjs.org/:_authToken=npm_" + "Ab1" * 12 + "`",
        "PuTTY-User-Key-File-2: ssh-rsa",
        *SHORTEST,
        "DB_PA\u017f\u017fWORD=hunter2isgreat and API_\u212aEY: 'x9Fk2LmQ7pQ'",  # letters a case-blind match folds
    ]
    texts += [path.read_text(errors="replace") for path in sorted(SAMPLES.rglob("*")) if path.is_file()]
    return texts


def _unfiltered(text: str) -> list[tuple[str, int]]:
    """What the scanner finds reading every line whole (no quick check, no windows)."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        found += [(kind, number) for kind, _ in secrets._line_findings(line, secrets._passes(None))]
    return sorted(set(found))


@pytest.mark.parametrize("text", _texts(), ids=lambda text: text[:30])
def test_the_quick_check_loses_nothing(text: str) -> None:
    windowed = {(finding.kind, finding.line) for finding in secrets.find_secrets(text)}
    unfiltered = set(_unfiltered(text))
    # The same lines hold a credential. Where two detectors report one stretch of text, the
    # finding names the first kind (a quoted token is also a high-entropy string).
    assert {line for _, line in windowed} == {line for _, line in unfiltered}
    assert windowed <= unfiltered
