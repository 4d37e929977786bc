"""The ledger is the only door to a balance: invariants under concurrency, on both databases."""

from __future__ import annotations

import random
import threading

import pytest
from sqlalchemy import func, select

from pixelmill.credits import ledger
from pixelmill.db.models import CreditReservation
from pixelmill.errors import InsufficientCredits
from pixelmill.resources import Resources
from tests.support.accounts import make_account

pytestmark = pytest.mark.both_databases


def test_reserve_capture_release_arithmetic(resources: Resources) -> None:
    acct = make_account(resources, credits=10)
    with resources.db.transaction() as s:
        r = ledger.reserve(s, acct.id, 4, "sync:test")
        assert ledger.balance(s, acct.id) == 6
        assert ledger.capture(s, r.id, 3)
        assert not ledger.capture(s, r.id, 2)  # would exceed the reservation
        assert ledger.release(s, r.id) == 1
        assert ledger.release(s, r.id) == 0  # exactly once
        assert not ledger.capture(s, r.id, 1)  # settled: nothing more can be captured
        assert ledger.balance(s, acct.id) == 7
        assert ledger.ledger_sum(s, acct.id) == 7


def test_insufficient_credits_leaves_balance(resources: Resources) -> None:
    acct = make_account(resources, credits=2)
    with pytest.raises(InsufficientCredits), resources.db.transaction() as s:
        ledger.reserve(s, acct.id, 3, "sync:test")
    with resources.db.transaction() as s:
        assert ledger.balance(s, acct.id) == 2
        assert ledger.ledger_sum(s, acct.id) == 2


def test_rollback_undoes_balance_and_ledger_together(resources: Resources) -> None:
    acct = make_account(resources, credits=5)
    with pytest.raises(RuntimeError), resources.db.transaction() as s:
        ledger.reserve(s, acct.id, 5, "sync:test")
        raise RuntimeError("the work failed before commit")
    with resources.db.transaction() as s:
        assert ledger.balance(s, acct.id) == 5 == ledger.ledger_sum(s, acct.id)


def test_concurrent_hammer_keeps_invariants(resources: Resources) -> None:
    """Many threads reserve, capture and release against one small balance at once. No balance
    ever goes negative (a CHECK constraint would raise), every reservation is settled once, and
    the balance equals both the ledger sum and initial + grants - captured."""
    start = 60
    acct = make_account(resources, credits=start)
    threads, iterations = 12, 25
    captured_total = 0
    granted_total = 0
    refused = 0
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker(seed: int) -> None:
        nonlocal captured_total, granted_total, refused
        rng = random.Random(seed)
        for _ in range(iterations):
            try:
                amount = rng.randint(1, 8)
                with resources.db.transaction() as s:
                    res = ledger.reserve(s, acct.id, amount, "sync:hammer")
                used = rng.randint(0, amount)
                with resources.db.transaction() as s:
                    if rng.random() < 0.5:
                        kept = ledger.settle(s, res.id, used)
                    else:
                        ledger.capture(s, res.id, used)
                        ledger.release(s, res.id)
                        ledger.release(s, res.id)  # a retry must not refund twice
                        kept = used
                with lock:
                    captured_total += kept
                if rng.random() < 0.1:
                    with resources.db.transaction() as s:
                        ledger.grant(s, acct.id, 5, memo="top-up")
                    with lock:
                        granted_total += 5
            except InsufficientCredits:
                with lock:
                    refused += 1
            except BaseException as exc:  # surfaced below; a thread must not swallow it
                errors.append(exc)
                return

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert not errors, errors[0]

    with resources.db.transaction() as s:
        final = ledger.balance(s, acct.id)
        assert final >= 0
        assert final == ledger.ledger_sum(s, acct.id)
        assert final == start + granted_total - captured_total
        held = s.scalar(
            select(func.count())
            .select_from(CreditReservation)
            .where(CreditReservation.user_id == acct.id, CreditReservation.status == "held")
        )
        assert held == 0
    assert captured_total > 0
