"""The billing tests' app: Stripe configured against the fake on 127.0.0.1, the fast job
settings (the history tests run scene, video and batch jobs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pixelmill.config import Settings
from tests.billing.fake_stripe import SECRET_KEY, WEBHOOK_SECRET, FakeStripe, fake_stripe
from tests.support.settings import job_settings


@pytest.fixture
def stripe_api() -> Iterator[FakeStripe]:
    with fake_stripe() as fake:
        yield fake


@pytest.fixture
def settings(database_url: str, tmp_path: Path, stripe_api: FakeStripe) -> Settings:
    return job_settings(
        database_url,
        tmp_path / "data",
        stripe_secret_key=SECRET_KEY,
        stripe_webhook_secret=WEBHOOK_SECRET,
        stripe_api_base=stripe_api.url,
    )
