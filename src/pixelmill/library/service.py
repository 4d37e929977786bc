"""Products and avatars: created and read through queries scoped to the account (another
account's UUID is a 404), soft-deleted products stay readable for the jobs that used them."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from pixelmill.db.base import utcnow
from pixelmill.db.models import Avatar, Product
from pixelmill.errors import NotFound

CATEGORIES = (
    "clothing",
    "accessories",
    "shoes",
    "bags",
    "jewelry",
    "electronics",
    "food",
    "beauty",
    "home",
    "houseware",
    "furniture",
    "other",
)


def normalise_category(category: str | None) -> str:
    """Lower-cased; any value outside :data:`CATEGORIES` reads as ``other``."""
    c = (category or "").strip().lower()
    return c if c in CATEGORIES else "other"


def create_product(
    session: Session,
    user_id: int,
    *,
    name: str,
    filename: str,
    category: str,
    description: str,
    image_key: str,
    width: int,
    height: int,
    product_id: str | None = None,
) -> Product:
    product = Product(
        id=product_id or str(uuid.uuid4()),
        user_id=user_id,
        name=name,
        filename=filename,
        category=category,
        description=description,
        image_key=image_key,
        width=width,
        height=height,
    )
    session.add(product)
    session.flush()
    return product


def _valid_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def get_product(
    session: Session, user_id: int, product_id: str, include_deleted: bool = False
) -> Product:
    if not _valid_uuid(product_id):
        raise NotFound("Product not found")
    stmt = select(Product).where(Product.id == product_id, Product.user_id == user_id)
    if not include_deleted:
        stmt = stmt.where(Product.deleted_at.is_(None))
    product = session.scalar(stmt)
    if product is None:
        raise NotFound("Product not found")
    return product


def list_products(session: Session, user_id: int, category: str | None) -> Sequence[Product]:
    stmt = select(Product).where(Product.user_id == user_id, Product.deleted_at.is_(None))
    if category:
        stmt = stmt.where(Product.category == category.strip().lower())
    return session.scalars(stmt.order_by(Product.created_at.desc(), Product.id)).all()


def delete_product(session: Session, user_id: int, product_id: str) -> None:
    if not _valid_uuid(product_id):
        raise NotFound("Product not found")
    done = session.execute(
        update(Product)
        .where(Product.id == product_id, Product.user_id == user_id, Product.deleted_at.is_(None))
        .values(deleted_at=utcnow())
        .returning(Product.id)
    ).first()
    if done is None:
        raise NotFound("Product not found")


def list_avatars(session: Session, user_id: int) -> Sequence[Avatar]:
    return session.scalars(
        select(Avatar)
        .where(Avatar.user_id == user_id, Avatar.deleted_at.is_(None))
        .order_by(Avatar.created_at.desc())
    ).all()


def get_avatar(session: Session, user_id: int, avatar_id: str) -> Avatar:
    if not _valid_uuid(avatar_id):
        raise NotFound("Avatar not found")
    avatar = session.scalar(
        select(Avatar).where(
            Avatar.id == avatar_id, Avatar.user_id == user_id, Avatar.deleted_at.is_(None)
        )
    )
    if avatar is None:
        raise NotFound("Avatar not found")
    return avatar
