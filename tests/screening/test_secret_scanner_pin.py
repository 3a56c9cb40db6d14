"""screening.secrets runs two private functions of detect-secrets: this fails when an upgrade
changes them, before anything quietly stops finding credentials."""

from __future__ import annotations

import inspect
from importlib.metadata import version

from detect_secrets.core import scan

from screening import secrets


def test_the_pinned_detect_secrets_has_what_the_scanner_calls() -> None:
    assert version("detect-secrets") == "1.5.0", "read screening/secrets.py again before upgrading"
    process = scan._process_line_based_plugins
    assert list(inspect.signature(process).parameters) == ["lines", "filename"]
    assert secrets._scanner() is process


def test_every_plugin_the_scanner_names_exists() -> None:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    known = {plugin.__name__ for plugin in get_mapping_from_secret_type_to_class().values()}
    assert set(secrets._PLUGINS) <= known
