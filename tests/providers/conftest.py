from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from pixelmill.app import create_app
from pixelmill.credits import ledger
from pixelmill.db.models import CreditReservation
from pixelmill.resources import Resources, build_resources
from pixelmill.worker import wire
from tests.conftest import make_settings
from tests.support import client_for

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


def consistent_balance(res: Resources, user_id: int) -> int:
    """The balance, equal to the ledger's sum, with no reservation left held."""
    with res.db.read() as session:
        balance = ledger.balance(session, user_id)
        assert balance == ledger.ledger_sum(session, user_id) >= 0
        held = session.scalars(
            select(CreditReservation.id).where(
                CreditReservation.user_id == user_id, CreditReservation.status == "held"
            )
        ).all()
        assert held == []
    return balance
