from __future__ import annotations

from pathlib import Path

import pytest

from pixelmill.config import Settings
from tests.jobs.helpers import job_settings


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return job_settings(database_url, tmp_path / "data")
