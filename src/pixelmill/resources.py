"""The live backends, built once at startup and passed to whoever needs them (no globals)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pixelmill.config import Settings
from pixelmill.db.session import Database
from pixelmill.ratelimit.limiter import RateLimiter


@dataclass
class Resources:
    settings: Settings
    db: Database
    limiter: RateLimiter
    # Filled in by later subsystems (storage, engines, queue); typed where they are built.
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def secret(self) -> str:
        return self.settings.resolved_secret_key

    def close(self) -> None:
        self.db.dispose()


def build_resources(settings: Settings) -> Resources:
    return Resources(
        settings=settings,
        db=Database(settings.resolved_database_url),
        limiter=RateLimiter(settings.ratelimit_storage, settings.enterprise_requests_per_minute),
    )
