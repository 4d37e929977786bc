"""The ``pixelmill`` command: migrate and the admin commands, on the test database."""

from __future__ import annotations

import re
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
