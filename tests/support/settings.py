"""The settings the tests build apps from: ``make_settings`` (a testing environment on a
given database), and ``job_settings``, the same with the fast job settings of the suites that
run jobs (small scenes, quick webhook retries, no background sweeps)."""

from __future__ import annotations

from pathlib import Path

from pixelmill.config import Settings

TEST_SECRET = "test-secret-" + "x" * 40

FAST = {
    "scene_size": 256,
    "webhook_retry_base_seconds": 0.2,
    "webhook_max_attempts": 4,
    "webhook_timeout_seconds": 5,
    "job_workers": 2,
    "sweep_interval_seconds": 3600,
    # Seconds of CPU per upload; tests/library/test_analysis.py turns it on.
    "analyze_products": False,
}


def make_settings(database_url: str, data_dir: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "env": "testing",
        "secret_key": TEST_SECRET,
        "database_url": database_url,
        "data_dir": data_dir,
        "allow_loopback_urls": True,
        "free_credits": 10,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


def job_settings(database_url: str, data_dir: Path, **overrides: object) -> Settings:
    return make_settings(database_url, data_dir, **{**FAST, **overrides})
