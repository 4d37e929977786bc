from __future__ import annotations

from pathlib import Path

import pytest

from pixelmill.config import Settings
from tests.jobs.helpers import job_settings


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    # Loopback URLs allowed (the product pages are served on 127.0.0.1); private ones are not.
    return job_settings(database_url, tmp_path / "data", allow_loopback_urls=True)
