"""Production settings pass Django's deployment checks, and every page carries a strict CSP."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys

import pytest
from django.conf import settings
from django.test import Client

pytestmark = pytest.mark.processes

PRODUCTION = {
    "HTTPS": "1",
    "DEBUG": "0",
    "ALLOWED_HOSTS": "memory.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://memory.example.com",
}


def test_check_deploy_is_clean_with_the_documented_production_settings() -> None:
    env = {**os.environ, **PRODUCTION, "SECRET_KEY": secrets.token_urlsafe(60)}
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/admin/login/", "/api/docs/", "/healthz"])
def test_pages_carry_a_content_security_policy(client: Client, path: str) -> None:
    response = client.get(path)

    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]


@pytest.mark.django_db
def test_the_api_docs_have_no_inline_script(client: Client) -> None:
    page = client.get("/api/docs/").content.decode()

    assert "<script>" not in page
    assert '<script src="' in page
