"""The JWT catalog (``/api/catalog``): the account's library products under integer ids, with
filters and pages. Products made before integer ids existed got theirs in migration 0009."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Select, func, or_, select
from sqlalchemy.orm import Session

from pixelmill.db.models import Product
from pixelmill.errors import NotFound


@dataclass(frozen=True)
class CatalogQuery:
    page: int = 1
    page_size: int = 25
    search: str | None = None
    category: str | None = None
    brand: str | None = None
    status: str | None = None
    collection_id: int | None = None


def _catalog(user_id: int) -> Select[Product]:
    """Every catalog read starts here: the account's products that are not deleted."""
    return select(Product).where(Product.user_id == user_id, Product.deleted_at.is_(None))


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def catalog_page(session: Session, user_id: int, q: CatalogQuery) -> tuple[Sequence[Product], int]:
    """One page of the account's products, newest first, and how many match in all."""
    stmt = _catalog(user_id)
    if q.search:
        like = f"%{_escape_like(q.search.strip().lower())}%"
        stmt = stmt.where(
            or_(
                func.lower(Product.name).like(like, escape="\\"),
                func.lower(Product.description).like(like, escape="\\"),
                func.lower(func.coalesce(Product.brand, "")).like(like, escape="\\"),
            )
        )
    if q.category:
        stmt = stmt.where(Product.category == q.category.strip().lower())
    if q.brand:
        stmt = stmt.where(func.lower(Product.brand) == q.brand.strip().lower())
    if q.status:
        stmt = stmt.where(Product.status == q.status)
    if q.collection_id is not None:
        stmt = stmt.where(Product.collection_id == q.collection_id)
    total = int(session.scalar(select(func.count()).select_from(stmt.subquery())) or 0)
    rows = session.scalars(
        stmt.order_by(Product.created_at.desc(), Product.id)
        .limit(q.page_size)
        .offset((q.page - 1) * q.page_size)
    ).all()
    return rows, total


def get_catalog_product(session: Session, user_id: int, number: int) -> Product:
    product = session.scalar(_catalog(user_id).where(Product.number == number))
    if product is None:
        raise NotFound("Product not found")
    return product
