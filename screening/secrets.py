"""Credentials in text: found with detect-secrets, named by kind and line, never echoed.

This module is the only one that touches detect-secrets, including two of its private functions
(``_process_line_based_plugins`` runs its plugins and its false-positive filters over lines, as its
own file scan does); tests/screening/test_secret_scanner_pin.py fails if an upgrade changes them.

Two passes over each line that could hold a secret:
- as prose (detect-secrets' rules for files it does not know): every format-specific detector (AWS,
  GitHub, Slack, Stripe, private keys, JWTs, …), the keyword detector on quoted values and the
  high-entropy detectors on quoted strings;
- as configuration (``name = value``, ``NAME: value``, as agents paste from .env and YAML): the
  keyword detector without quotes, kept only when the value looks like a password rather than a
  word ("password: rotate every 90 days" is advice, "DB_PASSWORD=hunter2isgreat" is a secret).

Most lines of prose can hold none: a line with no long token, no digit-and-letter word and none of
the scanner's keywords is skipped without running it (the scanner costs about 0.5 ms a line, this
check microseconds). tests/screening/test_secret_prefilter.py checks the skip loses nothing.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass

# What a redacted secret is replaced with: the kind stays readable, the value is gone.
REDACTION = "[REDACTED: {kind}]"

# detect-secrets' plugins by class name; the public IP detector is left out (an address is not a
# credential, and runbooks name hosts).
_PLUGINS = (
    "ArtifactoryDetector",
    "AWSKeyDetector",
    "AzureStorageKeyDetector",
    "BasicAuthDetector",
    "CloudantDetector",
    "DiscordBotTokenDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "Base64HighEntropyString",
    "HexHighEntropyString",
    "IbmCloudIamDetector",
    "IbmCosHmacDetector",
    "JwtTokenDetector",
    "KeywordDetector",
    "MailchimpDetector",
    "NpmDetector",
    "OpenAIDetector",
    "PrivateKeyDetector",
    "PypiTokenDetector",
    "SendGridDetector",
    "SlackDetector",
    "SoftlayerDetector",
    "SquareOAuthDetector",
    "StripeDetector",
    "TelegramBotTokenDetector",
    "TwilioKeyDetector",
)
_PROSE = "memory.txt"  # a name whose type detect-secrets does not know: its prose rules
_CONFIG = "memory.ini"  # a configuration file: keyword = value without quotes
_KEYWORD = "Secret Keyword"
_PRIVATE_KEY = "Private Key"

# Where the scanner could find something: a long token, a word mixing letters and digits, a URL
# with credentials, a key block's first line, or a secret-sounding name given a value (the keyword
# detector needs "name = value", "name: value" or a comparison, within a few characters).
_NAMES = r"key|pass|pwd|secret|token|auth|contrase|cloudant|softlayer|ibm|artifactory|hmac"
_NAME_GIVEN = rf"(?:{_NAMES})\w*[\]'\"]{{0,2}}\s*(?:[:=!<>]|\?\?)|[:=!<>]\s*\w*(?:{_NAMES})"
# A word mixing letters and digits, as long as the shortest token a detector knows by its form
# (Artifactory's, 11 characters; a ticket key or a region name is shorter).
_LONG_WORD = re.compile(r"[^\s\"'`]{11,}")
_DIGIT, _LETTER = re.compile(r"\d"), re.compile(r"[A-Za-z]")
_CANDIDATE = re.compile(
    r"[\"'][^\s\"'`]{20,}"  # a long quoted string (the high-entropy detectors read only those)
    r"|://[^\s/]*:[^\s/]*@"
    r"|BEGIN|PuTTY",
    re.IGNORECASE,
)
# What the configuration pass needs to find anything: its keyword detector reads only a
# secret-sounding name given a value. A window without one is read as prose alone.
_CONFIGURATION_CANDIDATE = re.compile(_NAME_GIVEN, re.IGNORECASE)
_NAME_PARTS = tuple(_NAMES.split("|"))
# A value that reads as a password: one token of eight or more characters mixing letters with
# digits or symbols, and not code: no brackets, not a (dotted) name, not a $reference.
_PASSWORD_LIKE = re.compile(r"^(?=.*[A-Za-z])(?=.*[\d\W_])(?![A-Za-z_.]+$)(?!\$)[^\s()\[\]{}<>]{8,}$")
# Files whose lines are "name = value" settings: the configuration pass reads them (and prose).
_CONFIG_SUFFIXES = (".env", ".ini", ".cfg", ".conf", ".properties", ".toml", ".yaml", ".yml")
_PEM_END = re.compile(r"-----END[ A-Z0-9]*PRIVATE KEY[ A-Z]*-----|---- END SSH2 ENCRYPTED PRIVATE KEY ----")


@dataclass(frozen=True)
class SecretFinding:
    """One credential: what kind it is and where, never its value."""

    kind: str
    line: int  # 1-based
    start: int  # offsets in the text: what redaction replaces
    end: int

    def where(self, field: str) -> str:
        return f"{field}, line {self.line}" if self.line > 1 else field


_configured = threading.Lock()
_ready = False


def _scanner() -> object:
    """detect-secrets' line scanner, configured once per process with our plugins.

    Its settings are process-wide: they are set once here and never changed, so threads scanning at
    the same time read the same configuration.
    """
    global _ready  # noqa: PLW0603 - configured once per process
    from detect_secrets.core import scan
    from detect_secrets.settings import get_filters, get_plugins, get_settings

    if not _ready:
        with _configured:
            if not _ready:
                get_settings().configure_plugins([{"name": name} for name in _PLUGINS])
                filters = get_settings().filters
                if filters.pop(_INDIRECT_REFERENCE, None) is not None:
                    filters[f"{__name__}.is_indirect_reference"] = {}
                get_plugins.cache_clear()
                get_filters.cache_clear()
                _ready = True
    return scan._process_line_based_plugins


_INDIRECT_REFERENCE = "detect_secrets.filters.heuristic.is_indirect_reference"


def is_indirect_reference(line: str) -> bool:
    """detect-secrets' filter of lines such as ``secret = get_secret_key()``, asked only of lines that
    hold what its pattern needs (an assignment or comparison, and a bracket opened and closed): the
    pattern backtracks over every start of a line, a third of a millisecond for a window of prose,
    which made it the scan's largest cost (a quarter of a batch write's time)."""
    from detect_secrets.filters.heuristic import is_indirect_reference as theirs

    if not any(mark in line for mark in ":=!") or not ("(" in line or "[" in line) or not (")" in line or "]" in line):
        return False
    return bool(theirs(line))


def _passes(filename: str | None) -> tuple[str, ...]:
    """The file names the scanner reads a text as: prose and configuration for a memory's text; a
    file's own name (detect-secrets' rules for its language), plus configuration for settings files."""
    if filename is None:
        return (_PROSE, _CONFIG)
    name = filename.rsplit("/", 1)[-1].lower()
    if name.endswith(_CONFIG_SUFFIXES) or name.startswith(".env"):
        return (filename, _CONFIG)
    return (filename,)


def _line_findings(line: str, passes: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """(kind, value) of each secret detect-secrets finds in one line, in each pass."""
    process = _scanner()
    seen: set[tuple[str, str]] = set()
    for filename in passes:
        for secret in process([(1, line)], filename):  # type: ignore[operator]
            value = str(secret.secret_value or "")
            if filename == _CONFIG and (secret.type != _KEYWORD or not _PASSWORD_LIKE.match(value)):
                continue
            if (secret.type, value) not in seen:
                seen.add((secret.type, value))
                yield secret.type, value


# How much of a line around a candidate the scanner reads: enough for "name = 'value'" and the
# words before a key. Long lines are read in windows: the scanner's cost grows with a line's length
# (30 ms for a 900-character line of prose), a window's does not.
WINDOW = 80


_WORD_START = re.compile(r"\S*$")
_WORD_END = re.compile(r"\S*")


def _candidates(line: str) -> list[tuple[int, int]]:
    """Where in ``line`` the scanner could find something, in order. Each kind has its own simple
    pattern (one pattern of them all tried every alternative at every character: 30 us a line), and a
    name given a value is looked for only in a line that holds a name (case folded, as the pattern
    compares)."""
    found = [match.span() for match in _LONG_WORD.finditer(line) if _DIGIT.search(match.group())]
    found = [span for span in found if _LETTER.search(line, *span)]
    found += [match.span() for match in _CANDIDATE.finditer(line)]
    folded = line.casefold()
    if any(part in folded for part in _NAME_PARTS):
        found += [match.span() for match in _CONFIGURATION_CANDIDATE.finditer(line)]
    return sorted(found)


def _windows(line: str) -> Iterator[tuple[int, str]]:
    """(offset, text) of the stretches of ``line`` around its candidates, overlapping ones joined."""
    spans: list[list[int]] = []
    for found_start, found_end in _candidates(line):
        start, end = max(0, found_start - WINDOW), min(len(line), found_end + WINDOW)
        # Whole words only: a window never starts or ends inside a token.
        start -= len(_WORD_START.search(line, 0, start).group())  # type: ignore[union-attr]
        end += len(_WORD_END.match(line, end).group())  # type: ignore[union-attr]
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    for start, end in spans:
        yield start, line[start:end]


def find_secrets(text: str, *, filename: str | None = None) -> list[SecretFinding]:
    """Every credential in ``text``, in order. A private key covers its whole block. ``filename``:
    the text is that file's (the code index), read by the scanner's rules for its type."""
    findings: list[SecretFinding] = []
    passes = _passes(filename)
    without_configuration = tuple(name for name in passes if name != _CONFIG)
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        stripped = line.rstrip("\r\n")
        for at, window in _windows(stripped):
            read_as = passes if _CONFIGURATION_CANDIDATE.search(window) else without_configuration
            for kind, value in _line_findings(window, read_as):
                findings.append(_locate(text, offset + at, window, number=number, kind=kind, value=value))
        offset += len(line)
    return _merged(findings)


# The characters a credential's token is made of: a finding grows to the whole token around the
# part the scanner reported (it reports "ghp" of a GitHub token, the first two parts of a JWT).
_TOKEN_CHARACTER = re.compile(r"[A-Za-z0-9_\-+/.~]")


def _locate(text: str, offset: int, line: str, *, number: int, kind: str, value: str) -> SecretFinding:
    if kind == _PRIVATE_KEY:
        # The scanner flags the BEGIN line; the key is everything up to its END line.
        end_of_key = _PEM_END.search(text, offset)
        return SecretFinding(kind, number, offset, end_of_key.end() if end_of_key else len(text))
    at = line.find(value) if value else -1
    if at < 0:  # the scanner normalised the value: the whole line goes
        return SecretFinding(kind, number, offset, offset + len(line))
    start, end = at, at + len(value)
    while start > 0 and _TOKEN_CHARACTER.match(line[start - 1]):
        start -= 1
    while end < len(line) and _TOKEN_CHARACTER.match(line[end]):
        end += 1
    return SecretFinding(kind, number, offset + start, offset + end)


def _merged(findings: list[SecretFinding]) -> list[SecretFinding]:
    """One finding per stretch of text: the first kind named wins where two detectors overlap."""
    kept: list[SecretFinding] = []
    for finding in sorted(findings, key=lambda f: (f.start, -(f.end - f.start))):
        if kept and finding.start < kept[-1].end:
            last = kept[-1]
            kept[-1] = SecretFinding(last.kind, last.line, last.start, max(last.end, finding.end))
            continue
        kept.append(finding)
    return kept


def redact_secrets(text: str, findings: list[SecretFinding] | None = None, *, filename: str | None = None) -> str:
    """``text`` with every credential replaced by ``[REDACTED: <kind>]``; lines keep their numbers
    (a key block's lines stay, emptied)."""
    found = find_secrets(text, filename=filename) if findings is None else findings
    for finding in sorted(found, key=lambda f: f.start, reverse=True):
        lines = "\n" * text.count("\n", finding.start, finding.end)
        text = text[: finding.start] + REDACTION.format(kind=finding.kind) + lines + text[finding.end :]
    return text
