"""The platform's own state: signs of life of its background processes."""

from __future__ import annotations

from django.db import models


class Heartbeat(models.Model):
    """When a background process last showed it was alive (the worker, running what beat sends)."""

    name = models.CharField(max_length=64, primary_key=True)
    beat_at = models.DateTimeField()
    hostname = models.CharField(max_length=255, blank=True)

    def __str__(self) -> str:
        return f"{self.name} at {self.beat_at:%Y-%m-%d %H:%M:%S}"
