"""The platform's own state: signs of life of its background processes, and request counters."""

from __future__ import annotations

from django.db import models


class Heartbeat(models.Model):
    """When a background process last showed it was alive (the worker, running what beat sends)."""

    name = models.CharField(max_length=64, primary_key=True)
    beat_at = models.DateTimeField()
    hostname = models.CharField(max_length=255, blank=True)

    def __str__(self) -> str:
        return f"{self.name} at {self.beat_at:%Y-%m-%d %H:%M:%S}"


class RateCount(models.Model):
    """Requests of one caller in one fixed window (memory_platform.throttling), when no Redis holds
    them: one row per caller and window, counted by an upsert that PostgreSQL serializes, so every
    process and thread counts exactly. The table is unlogged (a crash may forget a minute's counts,
    never slow a request with a write to the log)."""

    key = models.CharField(max_length=100)
    window = models.BigIntegerField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["key", "window"], name="rate_count_key_window")]

    def __str__(self) -> str:
        return f"{self.key} in window {self.window}: {self.count}"
