"""Prices in credits, as the spec and the clients state them. The operation catalog reads these;
``GET /api/credits/pricing`` publishes them (:func:`published_prices`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pixelmill.config import CreditPack

OPERATION_PRICES: dict[str, int] = {
    "background_removal": 1,
    "make_transparent": 1,
    "text_removal": 1,
    "convert": 1,
    "enhance": 1,
    "unblur": 1,
    "colorize": 1,
    "style_transfer": 1,
    "analyze": 1,
    "image_to_prompt": 1,
    "edit": 2,
    "image_to_image": 2,
    "replace_background": 2,
    "scene": 1,  # per scene of a scenes job
    "avatar": 1,  # per avatar of an avatar job
    "product_photo": 1,  # per image of a product-photo job (a product with an avatar)
    "tryon": 1,  # per image of a try-on job
    "silo": 1,  # per silhouette shot of a catalog product (JWT create-silo)
    "video": 50,  # a talking video job (v2 generate/video, JWT create-video)
    "quick_video": 5,  # per started 10 seconds of a synchronous quick video (at least one)
    "product_text": 1,  # per text field (description, tags, alt text) of a storefront product
    "product_upload": 0,
}

UPSCALE_SCALES = (2, 4, 8)

AD_PACK_PRICES: dict[str, int] = {
    "images": 6,
    "ads": 2,
    "captions": 1,
    "video": OPERATION_PRICES["video"],
}
"""The price of each part of an ad pack: 6 scene photos (1 each), 8 static ads (2: the first ad
of each set of four carries one), captions (1), the UGC video (a video job's price). All
parts: 59; without the video: 9. Each output's price is captured when it is delivered; what
was not delivered is released when the job ends."""
ASSET_COLLECTION_PRICE = 6
"""An asset collection: 1 per image (3 scenes, 1 silo, 2 ad layouts)."""
QUICK_VIDEO_STEP_SECONDS = 10


def shares(total: int, count: int) -> list[int]:
    """``total`` credits spread over ``count`` outputs in whole credits, the earliest output of
    each equal run carrying the odd credit (2 over 8: ``[1, 0, 0, 0, 1, 0, 0, 0]``)."""
    upto = [-(-n * total // count) for n in range(count + 1)]  # ceil(n * total / count)
    return [upto[i + 1] - upto[i] for i in range(count)]


def quick_video_price(seconds: float) -> int:
    """``OPERATION_PRICES["quick_video"]`` per started 10 seconds of video, at least once."""
    steps = max(1, math.ceil(round(seconds, 3) / QUICK_VIDEO_STEP_SECONDS))
    return steps * OPERATION_PRICES["quick_video"]


def upscale_price(scale: int) -> int:
    """2x and 4x cost 1 credit, 8x costs 2."""
    return 2 if scale >= 8 else 1


def per_output_price(name: str, num_outputs: int) -> int:
    """Jobs priced per image (avatar, product_photo, tryon): ``OPERATION_PRICES[name]`` each."""
    return num_outputs * OPERATION_PRICES[name]


def scenes_price(num_scenes: int) -> int:
    """A scenes job costs ``OPERATION_PRICES["scene"]`` per scene."""
    return num_scenes * OPERATION_PRICES["scene"]


def published_prices() -> dict[str, int]:
    """The price list of ``GET /api/credits/pricing``: every flat price, then each upscale
    factor as ``upscale_<n>x``."""
    return {
        **OPERATION_PRICES,
        **{f"upscale_{scale}x": upscale_price(scale) for scale in UPSCALE_SCALES},
    }


DEFAULT_CREDIT_PACKS: tuple[CreditPack, ...] = (
    CreditPack(id="pack_100", credits=100, price_cents=900, currency="usd"),
    CreditPack(id="pack_500", credits=500, price_cents=3900, currency="usd"),
    CreditPack(id="pack_2000", credits=2000, price_cents=12900, currency="usd"),
)
"""The credit packs on sale when ``PIXELMILL_CREDIT_PACKS`` is unset (docs/billing.md), in US
cents."""


def credit_packs(configured: Sequence[CreditPack] | None) -> tuple[CreditPack, ...]:
    """The packs on sale: ``PIXELMILL_CREDIT_PACKS`` (``settings.credit_packs``) when set, else
    :data:`DEFAULT_CREDIT_PACKS`. The one source of packs: Stripe Checkout sells these,
    ``GET /api/v2/billing/packs`` and ``GET /api/credits/pricing`` publish them."""
    return tuple(configured or DEFAULT_CREDIT_PACKS)
