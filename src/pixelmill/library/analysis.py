"""Filling in a product's category and description with the analysis engine.

The engine (OCR, detectors, colour and composition measures) takes seconds per image on a
small CPU, too long for a free synchronous upload, so it runs as the ``"library.analyze"``
task after the upload committed. Only fields the caller left out are touched, and only while
they still hold the quick measured values written at upload time.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from sqlalchemy import update
from sqlalchemy.orm import Session

from pixelmill.db.models import Product
from pixelmill.engines.analyze.analysis import analyze_image, guess_product_category
from pixelmill.imaging import ImageInputError
from pixelmill.library.images import SavedImage, load_image
from pixelmill.library.service import create_product, normalise_category
from pixelmill.queue import dispatch_after_commit

if TYPE_CHECKING:
    from pixelmill.resources import Resources

log = logging.getLogger("pixelmill.library")

TASK = "library.analyze"


def analyze_product(resources: Resources, product_id: str, fields: str) -> dict[str, str] | None:
    """The ``"library.analyze"`` task: ``fields`` is a comma-separated subset of
    ``category,description``. Returns what was written, or None when the product is gone."""
    wanted = {f for f in fields.split(",") if f in ("category", "description")}
    with resources.db.read() as session:
        product = session.get(Product, product_id)
        if product is None or not wanted:
            return None
        key, old_category, old_description = (
            product.image_key,
            product.category,
            product.description,
        )
    try:
        image = load_image(resources, key)
        analysis = analyze_image(image.pixels)
    except (ImageInputError, FileNotFoundError, ValueError) as exc:
        log.warning("product %s: analysis failed: %s", product_id, exc)
        return None
    written: dict[str, str] = {}
    with resources.db.transaction() as session:
        if "category" in wanted:
            category = normalise_category(guess_product_category(analysis))
            if category != old_category:
                done = session.execute(
                    update(Product)
                    .where(Product.id == product_id, Product.category == old_category)
                    .values(category=category)
                    .returning(Product.id)
                ).first()
                if done is not None:
                    written["category"] = category
        description = str(analysis.get("description") or "").strip()
        if "description" in wanted and description:
            done = session.execute(
                update(Product)
                .where(Product.id == product_id, Product.description == old_description)
                .values(description=description)
                .returning(Product.id)
            ).first()
            if done is not None:
                written["description"] = description
    return written


def schedule_analysis(
    session: Session,
    resources: Resources,
    product_id: str,
    *,
    category_given: bool,
    description_given: bool,
) -> bool:
    """Queue the analysis of a new product (after the caller's commit) when a field is
    missing and ``analyze_products`` is on. Returns whether it was queued."""
    fields = [
        name
        for name, given in (("category", category_given), ("description", description_given))
        if not given
    ]
    if not fields or not resources.settings.analyze_products:
        return False
    dispatch_after_commit(session, resources.queue, TASK, product_id, ",".join(fields))
    return True


def add_product(
    session: Session,
    resources: Resources,
    user_id: int,
    saved: SavedImage,
    *,
    product_id: str,
    name: str,
    filename: str,
    category: str | None,
    description: str,
    description_given: bool,
) -> Product:
    """Create a product from a saved upload and queue the analysis of whatever the caller did
    not give (``category`` None, or a measured ``description`` standing in for one)."""
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
    )
    schedule_analysis(
        session,
        resources,
        product.id,
        category_given=bool(category),
        description_given=description_given,
    )
    return product
