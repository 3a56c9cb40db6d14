"""The platform's own background task: the worker's heartbeat (see memory_platform/heartbeat.py)."""

from __future__ import annotations

from celery import shared_task

from memory_platform import heartbeat


@shared_task(ignore_result=True)
def worker_heartbeat() -> None:
    heartbeat.beat()
