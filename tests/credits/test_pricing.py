"""Prices that are not a flat operation price: the ad pack's parts and how a part's price is
spread over its outputs, the asset collection, quick videos."""

from __future__ import annotations

import pytest

from pixelmill.credits.pricing import (
    AD_PACK_PRICES,
    ASSET_COLLECTION_PRICE,
    OPERATION_PRICES,
    quick_video_price,
    shares,
)


def test_an_ad_pack_costs_59_with_the_video_and_9_without() -> None:
    assert sum(AD_PACK_PRICES.values()) == 59
    assert sum(v for k, v in AD_PACK_PRICES.items() if k != "video") == 9
    assert AD_PACK_PRICES["video"] == OPERATION_PRICES["video"]


@pytest.mark.parametrize(
    ("total", "count", "expected"),
    [
        (2, 8, [1, 0, 0, 0, 1, 0, 0, 0]),  # the pack's 8 ads: the first of each four carries one
        (6, 6, [1] * 6),
        (1, 1, [1]),
        (50, 1, [50]),
        (0, 3, [0, 0, 0]),
        (7, 3, [3, 2, 2]),
    ],
)
def test_shares_spread_a_price_in_whole_credits(
    total: int, count: int, expected: list[int]
) -> None:
    assert shares(total, count) == expected
    assert sum(shares(total, count)) == total


def test_asset_collection_and_quick_video_prices() -> None:
    assert shares(ASSET_COLLECTION_PRICE, 6) == [1] * 6
    step = OPERATION_PRICES["quick_video"]
    assert [quick_video_price(s) for s in (0.5, 10.0, 10.0004, 10.2, 25)] == [
        step,
        step,
        step,
        2 * step,
        3 * step,
    ]
