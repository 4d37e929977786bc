"""The folder several processes share their metric values through (prometheus_client's
multi-process mode). Kept apart from :mod:`.metrics`: it must be ready before
``prometheus_client`` is first imported, which reads ``PROMETHEUS_MULTIPROC_DIR`` then and
creates files in it."""

from __future__ import annotations

from pathlib import Path

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def prepare_multiprocess_dir(path: Path) -> None:
    """Create ``path`` and remove the value files a previous run left there (counters would
    otherwise start from the old run's totals). Call before any process of this run imports
    the metrics."""
    path.mkdir(parents=True, exist_ok=True)
    for stale in path.glob("*.db"):
        stale.unlink(missing_ok=True)
