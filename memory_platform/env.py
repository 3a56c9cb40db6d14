"""Small typed readers for configuration that comes from the environment."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class ConfigurationError(RuntimeError):
    """An environment variable holds a value the platform cannot use."""


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ConfigurationError(f"{name}={raw!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigurationError(f"{name}={raw!r} is not a whole number") from None


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigurationError(f"{name}={raw!r} is not a number") from None


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(name, default).strip().lower() or default
    if value not in choices:
        raise ConfigurationError(f"{name}={value!r} is not one of {', '.join(choices)}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def database_from_url(url: str) -> dict[str, Any]:
    """Translate a ``postgres://user:password@host:port/name?option=value`` URL into Django's form."""
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql", "pgsql"}:
        raise ConfigurationError(
            f"DATABASE_URL must start with postgres:// or postgresql:// (got scheme {parts.scheme!r})"
        )
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise ConfigurationError("DATABASE_URL has no database name; add it after the host, e.g. .../memory_platform")
    options = dict(parse_qsl(parts.query))
    # libpq's form for a socket directory: postgresql://user@/db?host=/run/postgresql
    host = options.pop("host", None) or unquote(parts.hostname or "")
    return {
        "ENGINE": "memory_platform.db",
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(parts.port or ""),
        "OPTIONS": options,
    }
