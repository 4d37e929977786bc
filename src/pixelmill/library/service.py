"""Products and avatars: created and read through queries scoped to the account (another
account's UUID is a 404), soft-deleted products stay readable for the jobs that used them. A
new product missing its category or description is analysed in the background (the
``"library.analyze"`` task, :mod:`pixelmill.library.tasks`)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, select, update
from sqlalchemy.orm import Session

from pixelmill.categories import normalise_category
from pixelmill.db.base import utcnow
from pixelmill.db.models import Avatar, Product, draw_number
from pixelmill.errors import NotFound
from pixelmill.library.images import SavedImage
from pixelmill.queue import TaskQueue, dispatch_after_commit

ANALYZE_TASK = "library.analyze"


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
    brand: str | None = None,
    status: str = "active",
    collection_id: int | None = None,
) -> Product:
    product = Product(
        id=product_id or str(uuid.uuid4()),
        number=draw_number(session, "product"),
        brand=brand,
        status=status,
        collection_id=collection_id,
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


def add_product(
    session: Session,
    queue: TaskQueue,
    user_id: int,
    saved: SavedImage,
    *,
    analyze: bool,
    product_id: str,
    name: str,
    filename: str,
    category: str | None,
    description: str,
    description_given: bool,
    brand: str | None = None,
    status: str = "active",
    collection_id: int | None = None,
) -> Product:
    """Create a product from a saved upload and, with ``analyze``, queue the analysis of
    whatever the caller did not give (``category`` None, or a measured ``description``
    standing in for one)."""
    product = create_product(
        session,
        user_id,
        product_id=product_id,
        name=name,
        filename=filename,
        category=normalise_category(category),
        description=description,
        image_key=saved.key,
        width=saved.image.width,
        height=saved.image.height,
        brand=brand,
        status=status,
        collection_id=collection_id,
    )
    if analyze:
        schedule_analysis(
            session,
            queue,
            product.id,
            category_given=bool(category),
            description_given=description_given,
        )
    return product


def schedule_analysis(
    session: Session,
    queue: TaskQueue,
    product_id: str,
    *,
    category_given: bool,
    description_given: bool,
) -> bool:
    """Queue the analysis of a new product (after the caller's commit) when a field is
    missing. Returns whether it was queued."""
    fields = [
        name
        for name, given in (("category", category_given), ("description", description_given))
        if not given
    ]
    if not fields:
        return False
    dispatch_after_commit(session, queue, ANALYZE_TASK, product_id, ",".join(fields))
    return True


def create_avatar(
    session: Session,
    user_id: int,
    *,
    name: str,
    image_key: str,
    kind: str,
    gender: str = "unspecified",
    prompt: str | None = None,
    characteristics: dict[str, Any] | None = None,
    landmarks: dict[str, Any] | None = None,
    job_id: str | None = None,
    parent_id: str | None = None,
    style: str | None = None,
) -> Avatar:
    """A new avatar with its UUID (v2) and its integer id (the avatar studio's)."""
    avatar = Avatar(
        id=str(uuid.uuid4()),
        number=draw_number(session, "avatar"),
        style=style,
        user_id=user_id,
        name=name[:255],
        gender=gender,
        image_key=image_key,
        kind=kind,
        prompt=prompt,
        characteristics=characteristics,
        landmarks=landmarks,
        job_id=job_id,
        parent_id=parent_id,
    )
    session.add(avatar)
    session.flush()
    return avatar


def avatars_of_job(session: Session, user_id: int, job_id: str) -> Sequence[Avatar]:
    """The avatars a generation job delivered, in the order it made them."""
    return session.scalars(
        _owned_avatars(user_id)
        .where(Avatar.job_id == job_id)
        .order_by(Avatar.created_at, Avatar.id)
    ).all()


def _owned_products(user_id: int) -> Select[Product]:
    """Every read of products starts here: another account's product is never found."""
    return select(Product).where(Product.user_id == user_id)


def _owned_avatars(user_id: int) -> Select[Avatar]:
    """Every read of avatars starts here (deleted avatars are gone)."""
    return select(Avatar).where(Avatar.user_id == user_id, Avatar.deleted_at.is_(None))


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
    stmt = _owned_products(user_id).where(Product.id == product_id)
    if not include_deleted:
        stmt = stmt.where(Product.deleted_at.is_(None))
    product = session.scalar(stmt)
    if product is None:
        raise NotFound("Product not found")
    return product


def list_products(session: Session, user_id: int, category: str | None) -> Sequence[Product]:
    stmt = _owned_products(user_id).where(Product.deleted_at.is_(None))
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
    return session.scalars(_owned_avatars(user_id).order_by(Avatar.created_at.desc())).all()


def get_avatar(session: Session, user_id: int, avatar_id: str) -> Avatar:
    """An avatar by its UUID, or by the studio's integer id when ``avatar_id`` is digits."""
    if avatar_id.isdigit():
        stmt = _owned_avatars(user_id).where(Avatar.number == int(avatar_id))
    elif _valid_uuid(avatar_id):
        stmt = _owned_avatars(user_id).where(Avatar.id == avatar_id)
    else:
        raise NotFound("Avatar not found")
    avatar = session.scalar(stmt)
    if avatar is None:
        raise NotFound("Avatar not found")
    return avatar


def studio_avatars(
    session: Session, user_id: int, parent_ids: Sequence[str] | None = None
) -> Sequence[Avatar]:
    """The account's avatars without a parent (``parent_ids`` None), or the children of
    ``parent_ids``: oldest first within each parent."""
    stmt = _owned_avatars(user_id)
    if parent_ids is None:
        stmt = stmt.where(Avatar.parent_id.is_(None)).order_by(Avatar.created_at.desc())
    else:
        stmt = stmt.where(Avatar.parent_id.in_(parent_ids)).order_by(Avatar.created_at)
    return session.scalars(stmt.order_by(Avatar.id)).all()
