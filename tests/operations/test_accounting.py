"""Reservations of synchronous runs: settled once; a live run keeps its reservation however
long it takes (heartbeat); a run whose process died gets its credits back from the sweep after
``PIXELMILL_SYNC_RESERVATION_TIMEOUT_SECONDS`` with a failed history row."""

from __future__ import annotations

import base64
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select, update

from pixelmill.app import create_app
from pixelmill.config import Settings
from pixelmill.db.base import utcnow
from pixelmill.db.models import CreditReservation, ProcessingRecord
from pixelmill.errors import InsufficientCredits
from pixelmill.operations.accounting import DEAD_RUN_ERROR, Charge
from pixelmill.resources import Resources, build_resources
from pixelmill.worker import wire
from tests.operations.slow_server import SlowConvert
from tests.support.accounts import make_account
from tests.support.credits import balance_of, consistent_balance
from tests.support.images import png_bytes
from tests.support.servers import client_for
from tests.support.settings import make_settings
from tests.support.waiting import wait_until

pytestmark = pytest.mark.both_databases

TIMEOUT = 1.5  # seconds: PIXELMILL_SYNC_RESERVATION_TIMEOUT_SECONDS in these tests


@pytest.fixture
def short(database_url: str, tmp_path: Path) -> Iterator[Resources]:
    """Resources whose synchronous reservations time out after TIMEOUT seconds."""
    settings = make_settings(
        database_url, tmp_path / "data", sync_reservation_timeout_seconds=TIMEOUT
    )
    res = wire(build_resources(settings))
    yield res
    res.close()


def _charge(user_id: int, processing_id: str) -> Charge:
    return Charge(processing_id, user_id, "convert", "v2", 1, 20, 10)


def _silence(res: Resources, reservation_id: str | None, seconds: float) -> None:
    """Make a reservation look as if its holder stopped renewing it ``seconds`` ago."""
    with res.db.transaction() as session:
        session.execute(
            update(CreditReservation)
            .where(CreditReservation.id == reservation_id)
            .values(heartbeat_at=utcnow() - timedelta(seconds=seconds))
        )


def test_sweep_releases_only_silent_holds(short: Resources) -> None:
    acct = make_account(short, credits=5)
    accounting = short.pipeline.accounting
    dead = accounting.reserve(_charge(acct.id, "a" * 32))
    alive = accounting.reserve(_charge(acct.id, "b" * 32))
    assert balance_of(short, acct.id) == 3
    _silence(short, dead.reservation_id, TIMEOUT * 1.2)
    _silence(short, alive.reservation_id, TIMEOUT * 0.5)

    assert short.pipeline.sweep()["reservations_released"] == 1
    assert balance_of(short, acct.id) == 4
    assert short.pipeline.sweep()["reservations_released"] == 0  # exactly once
    with short.db.read() as session:
        row = session.get(ProcessingRecord, "a" * 32)
        assert row is not None
        assert (row.status, row.credits_used, row.error) == ("failed", 0, DEAD_RUN_ERROR)
        assert (row.operation, row.surface, row.input_width, row.input_height) == (
            "convert",
            "v2",
            20,
            10,
        )
        assert row.details == {"reservation_id": dead.reservation_id, "credits_returned": 1}
        assert session.get(ProcessingRecord, "b" * 32) is None

    assert accounting.renew(alive)  # a heartbeat resets the clock
    _silence(short, alive.reservation_id, TIMEOUT * 0.9)
    assert short.pipeline.sweep()["reservations_released"] == 0

    accounting.fail(alive, RuntimeError("engine died"))
    assert not accounting.renew(alive)  # settled: nothing left to renew
    assert consistent_balance(short, acct.id) == 5
    with short.db.read() as session:
        row = session.get(ProcessingRecord, "b" * 32)
        assert row is not None
        assert (row.status, row.credits_used, row.error) == ("failed", 0, "engine died")


def test_complete_captures_and_records(resources: Resources) -> None:
    acct = make_account(resources, credits=3)
    accounting = resources.pipeline.accounting
    held = accounting.reserve(_charge(acct.id, "c" * 32))
    remaining = accounting.complete(held, 0.1234, None, {"method": "test"})
    assert remaining == 2 == balance_of(resources, acct.id)
    assert resources.pipeline.sweep()["reservations_released"] == 0
    with resources.db.read() as session:
        row = session.get(ProcessingRecord, "c" * 32)
        assert row is not None
        assert (row.status, row.credits_used, row.processing_time) == ("completed", 1, 0.123)
        assert (row.input_width, row.input_height, row.details) == (20, 10, {"method": "test"})


def test_completion_after_a_release_charges_once(short: Resources) -> None:
    """The sweep gave a live run's credits back (its heartbeat was silent past the timeout);
    the run then finishes: it is charged once, anew, and never below zero."""
    acct = make_account(short, credits=2)
    accounting = short.pipeline.accounting
    late = accounting.reserve(_charge(acct.id, "d" * 32))
    _silence(short, late.reservation_id, TIMEOUT * 2)
    assert short.pipeline.sweep()["reservations_released"] == 1
    assert balance_of(short, acct.id) == 2

    assert accounting.complete(late, 0.5, None, {}) == 1
    assert consistent_balance(short, acct.id) == 1
    with short.db.read() as session:
        row = session.get(ProcessingRecord, "d" * 32)
        assert row is not None  # one row: the sweep's "failed" became the real outcome
        assert (row.status, row.credits_used, row.error) == ("completed", 1, None)

    # Same again, but the credits given back were spent meanwhile: 402, nothing goes negative.
    broke = accounting.reserve(_charge(acct.id, "e" * 32))
    _silence(short, broke.reservation_id, TIMEOUT * 2)
    assert short.pipeline.sweep()["reservations_released"] == 1
    spent = accounting.reserve(_charge(acct.id, "f" * 32))
    accounting.complete(spent, 0.1, None, {})
    assert balance_of(short, acct.id) == 0
    with pytest.raises(InsufficientCredits):
        accounting.complete(broke, 0.5, None, {})
    accounting.fail(broke, InsufficientCredits("no credits left"))
    assert consistent_balance(short, acct.id) == 0
    with short.db.read() as session:
        row = session.get(ProcessingRecord, "e" * 32)
        assert row is not None
        assert (row.status, row.credits_used) == ("failed", 0)


def test_live_call_keeps_its_reservation_past_the_timeout(short: Resources) -> None:
    """A real call through the HTTP surface runs for three timeouts while the sweep runs
    continuously: its heartbeat keeps the reservation; it is then charged exactly once."""
    acct = make_account(short, credits=3)
    gate = threading.Event()
    slow = SlowConvert(gate)
    short.pipeline.engines = {**short.pipeline.engines, "convert": slow}
    app = create_app(short.settings, short)
    answers: list[httpx.Response] = []
    with client_for(app) as client:
        call = threading.Thread(
            target=lambda: answers.append(
                client.post(
                    "/api/v2/convert",
                    json={"image_base64": base64.b64encode(png_bytes(40, 30)).decode()},
                    headers=acct.key_headers,
                )
            )
        )
        call.start()
        assert slow.started.wait(30)
        deadline = time.monotonic() + 3 * TIMEOUT
        while time.monotonic() < deadline:  # the elapsed time is what is under test
            assert short.pipeline.sweep()["reservations_released"] == 0
            assert balance_of(short, acct.id) == 2
            time.sleep(0.1)
        gate.set()
        call.join(30)
    assert answers and answers[0].status_code == 200, answers
    assert answers[0].json()["credits_used"] == 1
    assert consistent_balance(short, acct.id) == 2


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_credits_of_a_killed_server_come_back(short: Resources, tmp_path: Path) -> None:
    """A server process SIGKILLed mid-call: the sweep of another process returns the credits
    once the reservation has been silent for the timeout, with a failed history row."""
    acct = make_account(short, credits=3)
    settings: Settings = short.settings
    port = _free_port()
    env = {
        **os.environ,
        "PIXELMILL_ENV": "testing",
        "PIXELMILL_SECRET_KEY": settings.resolved_secret_key,
        "PIXELMILL_DATABASE_URL": settings.resolved_database_url,
        "PIXELMILL_DATA_DIR": str(tmp_path / "killed"),
        "PIXELMILL_SYNC_RESERVATION_TIMEOUT_SECONDS": str(TIMEOUT),
        "PIXELMILL_CPU_WORKERS": "1",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.operations.slow_server", str(port)],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        base = f"http://127.0.0.1:{port}"

        def up() -> bool:
            try:
                return httpx.get(f"{base}/healthz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(up, timeout=90, interval=0.2)

        def call() -> None:
            with contextlib.suppress(httpx.HTTPError):  # the server dies under it
                httpx.post(
                    f"{base}/api/v2/convert",
                    json={"image_base64": base64.b64encode(png_bytes(40, 30)).decode()},
                    headers=acct.key_headers,
                    timeout=60,
                )

        threading.Thread(target=call, daemon=True).start()
        wait_until(lambda: balance_of(short, acct.id) == 2, timeout=30)
        time.sleep(TIMEOUT)  # long enough for the live call to renew its heartbeat
        assert short.pipeline.sweep()["reservations_released"] == 0
        server.send_signal(signal.SIGKILL)
        server.wait(10)
        killed = time.monotonic()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)

    def swept() -> bool:
        return short.pipeline.sweep()["reservations_released"] == 1

    wait_until(swept, timeout=10 * TIMEOUT, interval=0.05)
    back_after = time.monotonic() - killed
    # At most one timeout of silence (the last beat came at most a quarter of it before the kill),
    # plus the sweep's own latency: on the 2-core CI machine under the full suite one run took
    # 2.80 s (TIMEOUT + 1.3), so 2 s of slack; a stale reservation left for minutes still fails.
    # The hold ages from its last heartbeat, which came up to one renewal interval before
    # the kill (and `killed` is read only once the process is reaped): not before half the
    # timeout, and within it (plus the sweep's own period) after the server is gone.
    assert 0.5 * TIMEOUT <= back_after <= TIMEOUT + 2.0, back_after
    assert consistent_balance(short, acct.id) == 3
    with short.db.read() as session:
        rows = session.scalars(
            select(ProcessingRecord).where(ProcessingRecord.user_id == acct.id)
        ).all()
        assert [(r.status, r.operation, r.surface, r.error) for r in rows] == [
            ("failed", "convert", "v2", DEAD_RUN_ERROR)
        ]
    print(f"credits back {back_after:.2f} s after the kill (timeout {TIMEOUT} s)")


def test_timeout_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PIXELMILL_SYNC_RESERVATION_TIMEOUT_SECONDS", raising=False)
    assert Settings().sync_reservation_timeout_seconds == 15
    monkeypatch.setenv("PIXELMILL_SYNC_RESERVATION_TIMEOUT_SECONDS", "30")
    assert Settings().sync_reservation_timeout_seconds == 30
