"""The ``pixelmill`` command: migrate and the admin commands, on the test database."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pixelmill.cli import app
from pixelmill.credits import ledger
from pixelmill.resources import Resources
from tests.support.accounts import unique_email
from tests.support.settings import TEST_SECRET


@pytest.fixture
def cli_env(database_url: str, tmp_path: Path) -> dict[str, str]:
    return {
        "PIXELMILL_ENV": "testing",
        "PIXELMILL_SECRET_KEY": TEST_SECRET,
        "PIXELMILL_DATABASE_URL": database_url,
        "PIXELMILL_DATA_DIR": str(tmp_path / "data"),
    }


def test_admin_commands(cli_env: dict[str, str], resources: Resources, client: object) -> None:
    from fastapi.testclient import TestClient

    assert isinstance(client, TestClient)
    runner = CliRunner()
    assert runner.invoke(app, ["migrate"], env=cli_env).exit_code == 0

    email = unique_email("cli")
    out = runner.invoke(
        app, ["admin", "create-user", email, "--password", "pw-123456"], env=cli_env
    )
    assert out.exit_code == 0, out.output
    key = re.search(r"(pk_live_\S+)", out.output)
    assert key is not None
    headers = {"Authorization": f"Bearer {key.group(1)}"}
    assert client.get("/api/v1/user", headers=headers).json()["credits"] == 10

    out = runner.invoke(app, ["admin", "grant-credits", email, "25", "--purchase"], env=cli_env)
    assert out.exit_code == 0 and "balance 35" in out.output
    out = runner.invoke(app, ["admin", "set-plan", email, "pro"], env=cli_env)
    assert out.exit_code == 0
    account = client.get("/api/v2/account", headers=headers).json()
    assert account["subscription_tier"] == "pro" and account["total_purchased"] == 25

    out = runner.invoke(app, ["admin", "create-key", email], env=cli_env)
    second = out.output.strip()
    assert second.startswith("pk_live_") and second != key.group(1)
    assert (
        client.get("/api/v1/user", headers={"Authorization": f"Bearer {second}"}).status_code == 200
    )

    with resources.db.transaction() as session:
        uid = client.get("/api/v1/user", headers=headers).json()["id"]
        assert ledger.balance(session, uid) == ledger.ledger_sum(session, uid) == 35

    bad = runner.invoke(app, ["admin", "set-plan", email, "platinum"], env=cli_env)
    assert bad.exit_code != 0
    missing = runner.invoke(app, ["admin", "grant-credits", "nobody@example.com", "5"], env=cli_env)
    assert missing.exit_code != 0


def test_production_refuses_default_secret() -> None:
    from pydantic import ValidationError

    from pixelmill.config import Settings

    with pytest.raises(ValidationError, match="SECRET_KEY"):
        Settings(env="production", secret_key=None)
    with pytest.raises(ValidationError, match="REDIS_URL"):
        Settings(env="development", queue="celery", redis_url=None)


@pytest.mark.both_databases
def test_a_purchase_granted_by_the_operator_pays_what_is_owed_first(
    cli_env: dict[str, str], resources: Resources
) -> None:
    """``grant-credits --purchase`` is money arriving: it first pays the credits a refunded
    pack left owed (through the ledger); a plain grant leaves the debt alone."""
    from sqlalchemy import select

    from pixelmill.db.models import Purchase
    from tests.support.accounts import make_account
    from tests.support.credits import consistent_balance

    acct = make_account(resources, credits=0, tag="owes")
    with resources.db.transaction() as session:  # a pack refunded after 30 of it were spent
        session.add(
            Purchase(
                id=uuid.uuid4().hex,
                user_id=acct.id,
                pack_id="pack_100",
                credits=100,
                price_cents=900,
                currency="usd",
                status="refunded",
                refunded_cents=900,
                refunded_credits=70,
                owed_credits=30,
            )
        )
    runner = CliRunner()
    out = runner.invoke(app, ["admin", "grant-credits", acct.email, "10"], env=cli_env)
    assert out.exit_code == 0, out.output
    assert "balance 10" in out.output and "still owed: 30" in out.output
    assert consistent_balance(resources, acct.id) == 10

    out = runner.invoke(
        app, ["admin", "grant-credits", acct.email, "25", "--purchase"], env=cli_env
    )
    assert out.exit_code == 0, out.output
    assert "balance 5" in out.output and "30 owed credits collected" in out.output
    assert "still owed" not in out.output
    assert consistent_balance(resources, acct.id) == 5
    with resources.db.read() as session:
        purchase = session.scalar(select(Purchase).where(Purchase.user_id == acct.id))
        assert purchase is not None
        assert (purchase.owed_credits, purchase.refunded_credits) == (0, 100)
        assert ledger.total_purchased(session, acct.id) == 25
