"""Filling in a product's category and description with the analysis engine.

The engine (OCR, detectors, colour and composition measures) takes seconds per image on a
small CPU, too long for a free synchronous upload, so it runs as the ``"library.analyze"``
task after the upload committed (:mod:`pixelmill.library.tasks`). Only fields the caller left
out are touched, and only while they still hold the quick measured values written at upload
time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from pixelmill.categories import normalise_category
from pixelmill.db.models import Product
from pixelmill.engines.analyze import guess_product_category

FIELDS = ("category", "description")


@dataclass(frozen=True)
class ProductSnapshot:
    """A product's image and its fields as they were before the analysis ran."""

    product_id: str
    image_key: str
    category: str
    description: str


def snapshot(session: Session, product_id: str) -> ProductSnapshot | None:
    product = session.get(Product, product_id)
    if product is None:
        return None
    return ProductSnapshot(product.id, product.image_key, product.category, product.description)


def _replace(session: Session, before: ProductSnapshot, field: str, value: str) -> bool:
    """Write ``field`` only while it still holds the value the analysis started from."""
    column = getattr(Product, field)
    done = session.execute(
        update(Product)
        .where(Product.id == before.product_id, column == getattr(before, field))
        .values({field: value})
        .returning(Product.id)
    ).first()
    return done is not None


def apply_analysis(
    session: Session, before: ProductSnapshot, analysis: dict[str, Any], wanted: set[str]
) -> dict[str, str]:
    """Write the analysed ``wanted`` fields (conditional updates). Returns what was written."""
    found = {
        "category": normalise_category(guess_product_category(analysis)),
        "description": str(analysis.get("description") or "").strip(),
    }
    written: dict[str, str] = {}
    for field in FIELDS:
        value = found[field]
        changed = field in wanted and value and value != getattr(before, field)
        if changed and _replace(session, before, field, value):
            written[field] = value
    return written
