"""The storefront's activity log, per account (every read starts from
:func:`_owned_activities`: another account's id is a 404) and within an account per shop
(``shop_domain``): the app's own records, and one per settled enrichment job
(:mod:`pixelmill.storefront.service`). Functions take the caller's session first and never
commit."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, Select, case, func, select
from sqlalchemy.orm import Session

from pixelmill.db.base import utcnow
from pixelmill.db.models import StorefrontActivity
from pixelmill.errors import NotFound
from pixelmill.jobs.lifecycle import COMPLETED, FAILED
from pixelmill.storefront.schemas import (
    ActivityDetail,
    ActivityOut,
    ActivityProductSummary,
    ActivitySummary,
)


def text(value: str | None) -> str | None:
    """Free text for a text column: NUL characters dropped (PostgreSQL refuses them)."""
    return None if value is None else value.replace("\x00", "")


def _owned_activities(user_id: int) -> Select[StorefrontActivity]:
    """Every read of activities starts here."""
    return select(StorefrontActivity).where(StorefrontActivity.user_id == user_id)


def _touches_images(activity_type: str, products: Sequence[dict[str, Any]]) -> bool:
    if activity_type == "images":
        return True
    return any(
        str(c.get("field", "")).startswith("image") for p in products for c in p.get("changes", [])
    )


def log_activity(
    session: Session,
    user_id: int,
    *,
    shop_domain: str,
    activity_type: str,
    status: str,
    products: list[dict[str, Any]],
    credits_used: int = 0,
    error_message: str | None = None,
    job_id: int | None = None,
) -> StorefrontActivity:
    now = utcnow()
    row = StorefrontActivity(
        user_id=user_id,
        shop_domain=shop_domain,
        activity_type=activity_type,
        status=status,
        products=products,
        products_count=len(products),
        has_images=_touches_images(activity_type, products),
        credits_used=credits_used,
        error_message=text(error_message),
        job_id=job_id,
        created_at=now,
        updated_at=now,
    )
    session.add(row)
    session.flush()
    return row


def get_activity(
    session: Session, user_id: int, activity_id: int, lock: bool = False
) -> StorefrontActivity:
    stmt = _owned_activities(user_id).where(StorefrontActivity.id == activity_id)
    row = session.scalar(stmt.with_for_update() if lock else stmt)
    if row is None:
        raise NotFound("Activity not found")
    return row


def list_activities(
    session: Session,
    user_id: int,
    *,
    shop_domain: str | None,
    activity_type: str | None,
    status: str | None,
    page: int,
    per_page: int,
) -> tuple[Sequence[StorefrontActivity], int]:
    """Newest first; the page's rows and the total that match."""
    stmt = _owned_activities(user_id)
    if shop_domain:
        stmt = stmt.where(StorefrontActivity.shop_domain == shop_domain)
    if activity_type:
        stmt = stmt.where(StorefrontActivity.activity_type == activity_type)
    if status:
        stmt = stmt.where(StorefrontActivity.status == status)
    total = int(session.scalar(select(func.count()).select_from(stmt.subquery())) or 0)
    rows = session.scalars(
        stmt.order_by(StorefrontActivity.created_at.desc(), StorefrontActivity.id.desc())
        .limit(per_page)
        .offset((page - 1) * per_page)
    ).all()
    return rows, total


def pages(total: int, per_page: int) -> int:
    return max(1, math.ceil(total / per_page))


def activity_summary(session: Session, user_id: int, shop_domain: str | None) -> ActivitySummary:
    """Completed activities, the products they processed and those that touched images."""
    owned = StorefrontActivity.user_id == user_id
    scope: list[ColumnElement[bool]] = [owned]
    if shop_domain:
        scope.append(StorefrontActivity.shop_domain == shop_domain)
    done = [*scope, StorefrontActivity.status == COMPLETED]
    row = session.execute(
        select(
            func.count(),
            func.coalesce(func.sum(StorefrontActivity.products_count), 0),
            func.coalesce(func.sum(case((StorefrontActivity.has_images, 1), else_=0)), 0),
            func.coalesce(func.sum(StorefrontActivity.credits_used), 0),
        ).where(*done)
    ).one()
    failed = session.scalar(select(func.count()).where(*scope, StorefrontActivity.status == FAILED))
    by_type = {
        str(kind): int(n)
        for kind, n in session.execute(
            select(StorefrontActivity.activity_type, func.count())
            .where(*done)
            .group_by(StorefrontActivity.activity_type)
        )
    }
    return ActivitySummary(
        shop_domain=shop_domain,
        completed_activities=int(row[0]),
        products_processed=int(row[1]),
        image_jobs=int(row[2]),
        failed_activities=int(failed or 0),
        credits_used=int(row[3]),
        by_type=by_type,
    )


def update_activity(
    session: Session, user_id: int, activity_id: int, status: str | None, error_message: str | None
) -> StorefrontActivity:
    """``PATCH .../activities/{id}``: the given status (any of the four: an activity is the
    app's record), and ``error_message`` when given."""
    row = get_activity(session, user_id, activity_id, lock=True)
    if status is not None:
        row.status = status
    if error_message is not None:
        row.error_message = text(error_message)
    row.updated_at = utcnow()
    session.flush()
    return row


def activity_out(row: StorefrontActivity) -> ActivityOut:
    products = [
        ActivityProductSummary(
            id=str(p.get("id")),
            title=str(p.get("title") or ""),
            fields=[str(c.get("field")) for c in p.get("changes", [])],
        )
        for p in row.products
    ]
    return ActivityOut.from_row(row, products=products)


def activity_detail(row: StorefrontActivity) -> ActivityDetail:
    return ActivityDetail.from_row(row)
