"""The library tasks, thin: open a session, call the service. The wiring
(``pixelmill.worker``) binds them to their names."""

from __future__ import annotations

import logging
from collections.abc import Callable

from pixelmill.db.session import Database
from pixelmill.engines.analyze import analyze_image
from pixelmill.imaging import DecodedImage, ImageInputError
from pixelmill.library import analysis
from pixelmill.library.service import ANALYZE_TASK

log = logging.getLogger("pixelmill.library")

ANALYZE = ANALYZE_TASK


def analyze_product(
    db: Database, load_image: Callable[[str], DecodedImage], product_id: str, fields: str
) -> dict[str, str] | None:
    """``"library.analyze"``: ``fields`` is a comma-separated subset of
    ``category,description``. Returns what was written, or None when the product is gone.
    The engine runs outside any transaction."""
    wanted = {f for f in fields.split(",") if f in analysis.FIELDS}
    with db.read() as session:
        before = analysis.snapshot(session, product_id)
    if before is None or not wanted:
        return None
    try:
        found = analyze_image(load_image(before.image_key).pixels)
    except (ImageInputError, FileNotFoundError, ValueError) as exc:
        log.warning("product %s: analysis failed: %s", product_id, exc)
        return None
    with db.transaction() as session:
        return analysis.apply_analysis(session, before, found, wanted)
