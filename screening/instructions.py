"""Text that addresses the reading agent with orders: the shape of an injected instruction.

A memory is information for the agent that reads it, never an instruction to it. Rules do tell
agents what to do ("run the tests before you merge"); what marks an injection is different:
telling the reader to set aside its other instructions, to take a new role, to send secrets
somewhere, to hide what it does, or text dressed as a prompt's own markup. Those are found here,
deterministically, on the text's *skeleton*: Unicode look-alikes (a Cyrillic o, U+043E, for the
Latin one; full-width letters; zero-width characters; accents; digits standing for letters) are
folded to plain ASCII first, so "ignore" spelt in Cyrillic letters reads as what it is.

A finding flags a write for a curator's review; it never refuses one, so a false alarm costs a
curator a look, not an agent its memory. bench/screening.py counts the alarms on real corpora.
"""

from __future__ import annotations

import functools
import json
import re
import threading
import unicodedata
from dataclasses import dataclass
from importlib import resources

_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t"})
_LEET_WORD = re.compile(r"[a-z0-9]*[a-z][a-z0-9]*")
_SPACES = re.compile(r"[^\S\n]+")

_SECRETS = (
    r"(?:secrets?|credentials?|passwords?|passwds?|tokens?|api[ _-]?keys?|private[ _-]?keys?|ssh[ _-]?keys?"
    r"|access[ _-]?keys?|keys|env(?:ironment)?[ _-]?(?:variables|vars)|\.env|cookies?)"
)
_DESTINATION = r"(?:[\w.+-]+@[\w-]+\.[\w.-]+|https?://|ftp://|\bwebhook\b|\bpastebin\b)"
_NEGATED = re.compile(r"\b(?:never|not|dont|don't|no|avoid|without)\s+(?:\w+\s+){0,2}$")

# (code, what it means to a curator, pattern on the skeleton)
_PATTERNS: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (code, meaning, re.compile(pattern))
    for code, meaning, pattern in (
        (
            "override",
            "tells the reader to set aside its other instructions",
            r"\b(?:ignore|disregard|forget|override|bypass|overrule|supersede)\s+(?:(?:all|any|the|your|of|my)\s+)*"
            r"(?:previous|prior|above|earlier|preceding|existing|other|original|system|safety|curators?'?s?|these"
            r"|those|all|every)\s+(?:\w+\s+)?(?:instructions?|rules|prompts?|directives?|guidelines|guardrails"
            r"|policies|constraints|memories|context|orders)\b",
        ),
        (
            "override",
            "claims to override the system",
            r"\b(?:system|admin|administrator|developer|root|god)\s+(?:override|prompt\s+override|mode\s+enabled)\b"
            r"|\bjailbreak|\bdo anything now\b|\bdeveloper mode\b",
        ),
        (
            "new_role",
            "gives the reader a new role or new orders",
            r"\byou are now (?:an? |the |my )?(?:new |unrestricted |evil )?(?:assistant|agent|ai|bot|model|admin"
            r"|administrator|system|developer|root|dan)\b|\byou are now in (?:developer|god|admin|unrestricted) mode"
            r"|\bfrom now on,?\s+(?:you|all agents|every agent|agents|the assistant)\b"
            r"|\byou (?:must|will|shall|should|have to) now\b|\b(?:your|the) new (?:instructions?|task|role|orders"
            r"|objective|directive)\b|\bnew (?:system )?instructions?\s*:|\bpretend (?:to be|you are)\b",
        ),
        (
            "exfiltration",
            "asks the reader to send secrets out",
            rf"\b(?:send|e-?mail|mail|post|upload|forward|exfiltrate|leak|transmit|copy|share|dump|reveal|expose"
            rf"|paste|submit|report)\b[^.\n]{{0,80}}?\b{_SECRETS}\b[^.\n]{{0,80}}?{_DESTINATION}"
            rf"|\b(?:exfiltrate|leak)\b[^.\n]{{0,40}}?\b{_SECRETS}\b",
        ),
        (
            "concealment",
            "asks the reader to hide what it does",
            r"\b(?:do not|don't|dont|never|without)\s+(?:tell|telling|inform|informing|alert|alerting|notify"
            r"|notifying|mention|mentioning|warn|warning)(?:ing)?\b[^.\n]{0,30}?\b(?:the\s+)?(?:user|human|curator"
            r"|operator|admin|anyone|developer|reviewer)s?\b",
        ),
        (
            "prompt_markup",
            "is dressed as a prompt's own markup",
            r"<\|?(?:im_start|im_end|system|endoftext)\|?>|\[/?inst\]|</?system>|^\s*#{1,4}\s*(?:system|instruction)s?\b"
            r"|^\s*(?:system|assistant)\s*:",
        ),
        (
            "addressed_to_agents",
            "addresses the AI reading it",
            r"\b(?:note|message|attention|instructions?|memo)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:ai|llm"
            r"|assistant|agent|model|language model)s?\b|\bif you are an? (?:ai|llm|language model|assistant"
            r"|agent|bot)\b|\b(?:ai|llm) (?:agents?|assistants?|models?) (?:reading|that reads?|who reads?) this\b",
        ),
        (
            "remote_code",
            "tells the reader to run code fetched from elsewhere",
            r"\b(?:curl|wget)\b[^|\n]{0,200}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b",
        ),
    )
)


@dataclass(frozen=True)
class InstructionFinding:
    code: str  # override, new_role, exfiltration, concealment, prompt_markup, addressed_to_agents, remote_code
    meaning: str  # what it means, for a curator
    excerpt: str  # the matched words, as their skeleton reads (look-alikes folded)
    line: int  # 1-based


_confusables_lock = threading.Lock()


@functools.cache
def _look_alikes() -> dict[int, str]:
    """Every character Unicode lists as confusable with a plain ASCII letter or digit, mapped to it
    (from confusable-homoglyphs' copy of Unicode's confusables table; read on first use)."""
    with _confusables_lock:
        data = json.loads(resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8"))
    table: dict[int, str] = {}
    for character, homoglyphs in data.items():
        if len(character) != 1 or character.isascii():
            continue
        plain = [entry["c"] for entry in homoglyphs if len(entry["c"]) == 1 and entry["c"].isascii()]
        # Lower-case letters first: the skeleton is read in lower case (U+0456 is "i", not "l").
        letters = sorted((c for c in plain if c.isalnum()), key=lambda c: (not c.islower(), not c.isalpha()))
        if letters:
            table[ord(character)] = letters[0]
    return table


def _fold(text: str) -> str:
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", text).lower()
    # Zero-width characters, direction marks and the like vanish; accents come off their letters.
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if unicodedata.category(c) not in ("Cf", "Mn"))
    return text.translate(_look_alikes())


def skeleton(text: str) -> str:
    """The text as the patterns read it: look-alikes folded to ASCII, lower case, digits that stand
    for letters inside words read as those letters, runs of spaces as one."""
    folded = _fold(text).lower()
    folded = _LEET_WORD.sub(lambda word: word.group().translate(_LEET), folded)
    return _SPACES.sub(" ", folded)


def find_instructions(text: str) -> list[InstructionFinding]:
    """Every place ``text`` reads as an instruction to the agent reading it (one finding per code)."""
    if not text:
        return []
    lines = skeleton(text).splitlines()
    found: dict[str, InstructionFinding] = {}
    for number, line in enumerate(lines, start=1):
        for code, meaning, pattern in _PATTERNS:
            if code in found:
                continue
            for match in pattern.finditer(line):
                if code == "exfiltration" and _NEGATED.search(line[: match.start()]):
                    continue  # "never send credentials to …" is a rule against it
                found[code] = InstructionFinding(code, meaning, " ".join(match.group().split())[:120], number)
                break
    return list(found.values())
