"""The task table: thin wrappers named ``"domain.verb"``; both queues run these functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pixelmill.jobs.runner import run_job
from pixelmill.library.analysis import analyze_product
from pixelmill.webhooks.delivery import deliver

if TYPE_CHECKING:
    from pixelmill.resources import Resources

TASKS: dict[str, Callable[..., object]] = {
    "jobs.run": run_job,
    "webhooks.deliver": deliver,
    "library.analyze": analyze_product,
}


def run_task(resources: Resources, task: str, args: tuple[str, ...]) -> None:
    """Run task ``task`` with ``args`` against ``resources`` (a KeyError for unknown names)."""
    TASKS[task](resources, *args)
