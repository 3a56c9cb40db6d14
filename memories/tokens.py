"""Counting tokens with a real tokenizer (the bundled model's WordPiece vocabulary).

LLM tokenizers differ from it by a modest margin; budgets are therefore approximate, but they
are counted, not guessed from characters.
"""

from __future__ import annotations

import threading
from typing import Any

from memories.embeddings.local import model_files

_tokenizer: Any = None
_lock = threading.Lock()


def _get() -> Any:
    global _tokenizer  # noqa: PLW0603 - loaded once per process
    if _tokenizer is None:
        with _lock:
            if _tokenizer is None:
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(model_files()[1]))
                tokenizer.no_truncation()
                tokenizer.no_padding()
                _tokenizer = tokenizer
    return _tokenizer


def count_tokens(text: str) -> int:
    return len(_get().encode(text, add_special_tokens=False).ids)
