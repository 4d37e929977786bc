"""The provider tests' app: built per test from settings with provider routes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pixelmill.app import create_app
from pixelmill.resources import Resources, build_resources
from pixelmill.worker import wire
from tests.support.servers import client_for
from tests.support.settings import make_settings

RoutedApp = Callable[..., AbstractContextManager[tuple[TestClient, Resources]]]


@pytest.fixture
def routed_app(database_url: str, tmp_path: Path) -> RoutedApp:
    """A live app built from settings with provider routes (short deadlines, two tries)."""

    @contextmanager
    def build(**overrides: object) -> Iterator[tuple[TestClient, Resources]]:
        values: dict[str, object] = {
            "provider_timeout_seconds": 1.0,
            "provider_max_attempts": 2,
        }
        values.update(overrides)
        settings = make_settings(database_url, tmp_path / "data", **values)
        res = wire(build_resources(settings))
        try:
            with client_for(create_app(settings, res)) as client:
                yield client, res
        finally:
            res.close()

    return build
