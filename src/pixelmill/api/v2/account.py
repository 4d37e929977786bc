"""``GET /api/v2/account``: validates the key; the owning account and its balance.
``GET /api/v2/account/history``: every change to the balance, with what it paid for.
``POST /api/v2/account/test-key``: a new test key, shown once.
``GET /api/v2/usage``: the credits the account spent on work, by day or by operation."""

from __future__ import annotations

from datetime import date, timedelta
from functools import partial
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response
from fastapi.responses import JSONResponse

from pixelmill.accounts import service as accounts
from pixelmill.accounts.plans import get_plan
from pixelmill.accounts.schemas import Account, Me, RateLimits, TestKeyCreated
from pixelmill.api.deps import ApiKeyUser, BaseUrl, DbSession, LiveUser, ReadSession, Res
from pixelmill.billing.history import history as account_history
from pixelmill.billing.history import kept_results
from pixelmill.billing.schemas import History
from pixelmill.billing.usage import GroupBy, usage_report
from pixelmill.credits import ledger
from pixelmill.errors import InvalidInput
from pixelmill.queue import run_after_commit

router = APIRouter(prefix="/api/v2", tags=["v2 account"])


@router.get("/account", response_model=Account)
async def account(user: ApiKeyUser, resources: Res) -> Response:
    """The account that owns the API key, its credit balance and its plan limits.

    Answered as JSON already serialised from :class:`Account`: returning the model would have
    FastAPI validate it a second time against ``response_model`` on every call (this is the
    benchmarked authenticated path, ``bench/bench_account.py``)."""
    row = await resources.db.fetch_row(ledger.CREDIT_TOTALS, {"user_id": user.id})
    totals = ledger.CreditTotals.of(row)  # read now: the authenticated user may be cached
    plan = get_plan(totals.plan)
    me = Me.of(user, totals.credits).model_dump() | {"subscription_tier": totals.plan}
    body = Account(
        **me,
        total_purchased=totals.total_purchased,
        rate_limits=RateLimits(
            requests_per_minute=plan.requests_per_minute
            or resources.settings.enterprise_requests_per_minute,
            requests_per_day=plan.requests_per_day,
            max_file_size_mb=plan.max_file_bytes // (1024 * 1024),
        ),
    )
    return Response(body.model_dump_json(), media_type="application/json")


@router.get("/account/history")
def history(
    user: ApiKeyUser,
    session: ReadSession,
    resources: Res,
    base_url: BaseUrl,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    offset: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0,
) -> History:
    """The account's history, newest first, paged: every change to its balance with what it
    paid for: synchronous calls, jobs of every kind, batches (``credits_refunded``: what
    failed outputs gave back), grants, purchases and payment refunds. ``credits`` is the
    signed change; the entries add up to the balance. The same body as ``/api/v1/history``."""
    link = kept_results(resources.signer, base_url, resources.settings.result_ttl_hours)
    return account_history(session, user.id, limit=limit, offset=offset, link=link)


@router.post("/account/test-key", status_code=201, response_model=TestKeyCreated)
def create_test_key(user: LiveUser, session: DbSession, resources: Res) -> TestKeyCreated:
    """A new test key (``pk_test_...``) for the account, shown once; the account's earlier
    test key stops working. Calls made with it run the real engines but are never charged
    (``X-Credits-Charged: 0``, no ledger entry), every image they deliver carries a visible
    "TEST" watermark, their bodies say ``"test": true``, and they have a rate limit of their
    own (``PIXELMILL_TEST_KEY_REQUESTS_PER_MINUTE``, 10 by default). Needs the live key or an
    access token: a test key cannot make keys (403)."""
    token = accounts.create_test_key(session, resources.secret, user.id)
    # The earlier test key stops working in this process as soon as this commits.
    run_after_commit(session, partial(resources.credentials.forget_user, user.id))
    return TestKeyCreated(token=token, api_key=token)


MAX_USAGE_DAYS = 366


@router.get("/usage", responses={200: {"content": {"text/csv": {}}}})
def usage(
    user: ApiKeyUser,
    session: ReadSession,
    start: Annotated[date | None, Query(alias="from", description="first day (UTC)")] = None,
    end: Annotated[date | None, Query(alias="to", description="last day, included")] = None,
    group_by: GroupBy = "day",
    format: Literal["json", "csv"] = "json",
) -> Response:
    """Credits spent on work (charges less the refunds of failed work) from ``from`` to ``to``
    (default: the last 30 days), per day or per operation, as JSON (``total_credits`` and
    ``rows``) or CSV. Grants and purchases are history, not usage."""
    last = end or date.today()
    first = start or last - timedelta(days=29)
    if first > last or (last - first).days >= MAX_USAGE_DAYS:
        raise InvalidInput(f"from must be on or before to, at most {MAX_USAGE_DAYS} days apart")
    report = usage_report(session, first, last, group_by, user.id)
    if format == "csv":
        return Response(report.as_csv(), media_type="text/csv")
    return JSONResponse(report.as_json())
