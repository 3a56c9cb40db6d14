"""Screening of texts that agents write: credentials (secrets) and instructions aimed at other agents.

Pure functions over text, with no models and no database: memories and the code index both screen
what they store through here. ``secrets`` wraps the kept scanner (detect-secrets) and is the only
module that touches it; ``instructions`` finds text that addresses the reading agent with orders.
"""

from screening.instructions import InstructionFinding, find_instructions, skeleton
from screening.secrets import SecretFinding, find_secrets, redact_secrets

__all__ = [
    "InstructionFinding",
    "SecretFinding",
    "find_instructions",
    "find_secrets",
    "redact_secrets",
    "skeleton",
]
