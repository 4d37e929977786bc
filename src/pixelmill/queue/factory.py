"""Builds the queue the settings ask for."""

from __future__ import annotations

from pixelmill.config import Settings
from pixelmill.queue.base import BindableQueue


def build_queue(settings: Settings) -> BindableQueue:
    """``inline``: a thread pool of ``job_workers`` in this process; ``celery``: Celery on
    ``redis_url`` (tasks run in ``pixelmill worker`` processes)."""
    if settings.queue == "celery":
        from pixelmill.queue.celery import CeleryQueue

        return CeleryQueue(settings)
    from pixelmill.queue.inline import InlineQueue

    return InlineQueue(settings.job_workers, settings.webhook_workers)
