"""The per-product state of an enrichment job: items recorded once, a resumed run's delivery
replacing an earlier failure of the same item, counters derived from the products."""

from __future__ import annotations

from pixelmill.db.models import EnrichmentJob
from pixelmill.storefront.enrichment import fail_pending, mark_item, new_product_state


def _row() -> EnrichmentJob:
    items = ["description", "remove_background"]
    return EnrichmentJob(
        products=[
            new_product_state("a", "A", "", [], items),
            new_product_state("b", "B", "", [], items),
        ],
        products_completed=0,
        products_failed=0,
        credits_used=0,
    )


def test_items_count_once_and_a_retry_replaces_a_failure() -> None:
    row = _row()
    assert mark_item(row, 0, "description", value="copy", price=1)
    assert not mark_item(row, 0, "description", value="again", price=1)  # a repeat
    assert row.products[0]["status"] == "processing" and row.credits_used == 1
    assert mark_item(row, 0, "remove_background", error="fetch failed")
    assert row.products[0]["status"] == "failed" and row.products_failed == 1
    assert not mark_item(row, 0, "remove_background", error="fetch failed")
    # The resumed run delivered it after all.
    image = {"operation": "remove_background", "label": "remove_background", "key": "k"}
    assert mark_item(row, 0, "remove_background", image=image, price=1)
    p = row.products[0]
    assert p["status"] == "completed" and p["errors"] == [] and p["credits_used"] == 2
    assert (row.products_completed, row.products_failed, row.credits_used) == (1, 0, 2)
    fail_pending(row, "cancelled")
    b = row.products[1]
    assert b["status"] == "failed" and len(b["errors"]) == 2 and b["pending"] == []
    assert (row.products_completed, row.products_failed) == (1, 1)
    assert not mark_item(row, 5, "description", value="x")
