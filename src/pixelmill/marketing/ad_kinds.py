"""The ad job kinds of this domain (``jobs/runner.py::JobKind``; ``kinds.py`` holds ``video``):

- ``ad_pack``: a product page read in ``plan`` (through the SSRF guard; a page that cannot be
  fetched or names no product fails the job, its credits released), then, per the job's
  ``include_*`` flags, scene photos (the registry's ``scenes`` engine), static ads (the ``ad``
  engine's layouts, one per platform), captions (templated) and a UGC video
  (``video.Voiceover``), each output carrying its share of its part's price.
- ``asset_collection``: an uploaded product photo made into six marketing images: three
  scenes, a silo (the cut-out on white) and two ad layouts, one share of its price each.

A plan depends only on the job's parameters and seed, so a resumed job re-plans the same
outputs and skips those already delivered.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import cv2
import numpy as np
from pydantic import Field
from sqlalchemy.orm import Session

from pixelmill.categories import Category, normalise_category
from pixelmill.credits.pricing import ASSET_COLLECTION_PRICE, shares
from pixelmill.engines.ads import PLATFORMS, AdCopy, cut_out, render_ad
from pixelmill.engines.base import (
    Engine,
    EngineError,
    EngineInputs,
    ImageArray,
    MultiImageEngine,
    OutputFile,
    OutputImage,
    Planned,
    PlannedFile,
    PlannedImage,
)
from pixelmill.engines.product_text import AdCopyParams, AdText, first_sentence, shorten
from pixelmill.engines.scenes import ScenesParams
from pixelmill.imaging import (
    DecodedImage,
    FetchPolicy,
    ImageInputError,
    ImageLimits,
    decode_image,
    fetch_image_url,
)
from pixelmill.jobs import service as jobs
from pixelmill.jobs.runner import Rendered
from pixelmill.jobs.service import Claim, JobParams
from pixelmill.marketing.pages import PageError, ProductFacts, page_policy, read_product_page
from pixelmill.marketing.video import Voiceover

AD_PACK_KIND = "ad_pack"
ASSET_COLLECTION_KIND = "asset_collection"

# Positions of an ad pack's outputs (stable: a resumed job skips what was delivered).
PRODUCT_POSITION = 0
PHOTO_POSITIONS = range(1, 7)
AD_POSITION = 10
CAPTIONS_POSITION = 20
VIDEO_POSITION = 30

PACK_AD_STYLES: dict[str, str] = {
    "instagram-square": "minimal",
    "instagram-story": "bold",
    "facebook-feed": "minimal",
    "facebook-square": "vibrant",
    "twitter": "dark",
    "linkedin": "elegant",
    "pinterest": "elegant",
    "tiktok": "bold",
}
"""The style of each of an ad pack's eight ads (a mix, so the pack offers several looks)."""

WORK_SIDE = 1600
"""Product photos are worked on at most this long side (the cut-out model runs at 320²)."""

_CATEGORY_WORDS: tuple[tuple[Category, tuple[str, ...]], ...] = (
    (Category.SHOES, ("shoe", "sneaker", "boot", "sandal", "trainer", "heel", "loafer")),
    (Category.BAGS, ("bag", "backpack", "tote", "purse", "wallet", "clutch")),
    (Category.JEWELRY, ("ring", "necklace", "earring", "bracelet", "jewel", "pendant")),
    (Category.CLOTHING, ("shirt", "dress", "jacket", "hoodie", "sweater", "jeans", "apparel",
                         "coat", "trouser", "pants", "skirt", "clothing", "tee")),
    (Category.BEAUTY, ("serum", "cream", "lotion", "lipstick", "mascara", "perfume", "skincare",
                       "beauty", "cosmetic", "shampoo", "moisturi")),
    (Category.ELECTRONICS, ("phone", "headphone", "earbud", "speaker", "laptop", "camera",
                            "charger", "electronic", "keyboard", "mouse", "watch")),
    (Category.FURNITURE, ("chair", "sofa", "table", "desk", "lamp", "shelf", "furniture", "stool")),
    (Category.HOUSEWARE, ("mug", "cup", "bottle", "kitchen", "plate", "bowl", "candle", "vase",
                          "pan")),
    (Category.FOOD, ("coffee", "tea", "chocolate", "snack", "sauce", "honey", "food", "cookie")),
)  # fmt: skip


def guess_category(facts: ProductFacts) -> Category:
    """A scenes category from the page's category, name and description (keywords)."""
    direct = normalise_category(facts.category.rsplit(">", 1)[-1])
    if direct is not Category.OTHER:
        return direct
    text = f"{facts.category} {facts.name} {facts.description[:300]}".lower()
    for category, words in _CATEGORY_WORDS:
        if any(w in text for w in words):
            return category
    return Category.OTHER


def work_size(pixels: ImageArray) -> ImageArray:
    h, w = pixels.shape[:2]
    k = WORK_SIDE / max(h, w)
    if k >= 1:
        return pixels
    size = (max(1, round(w * k)), max(1, round(h * k)))
    return np.asarray(cv2.resize(pixels, size, interpolation=cv2.INTER_AREA), np.uint8)


def _json_file(label: str, data: dict[str, Any]) -> OutputFile:
    body = json.dumps(data, ensure_ascii=False, indent=1).encode()
    return OutputFile(body, "application/json", "json", label=label, data=data)


def _ad_output(cutout: ImageArray, platform: str, style: str, copy: AdCopy) -> OutputImage:
    render = render_ad(cutout, PLATFORMS[platform], style, copy)
    data = {
        "platform": platform,
        "style": style,
        "width": PLATFORMS[platform].width,
        "height": PLATFORMS[platform].height,
    }
    return OutputImage(render.pixels, label=f"ad:{platform}", data=data)


class AdPackJobParams(JobParams):
    """What an ``ad_pack`` job keeps: the page, the parts and their prices, the warnings;
    then, merged in as each is delivered, the page's ``product`` facts, the ``captions`` and
    the ``video``'s data."""

    url: str
    parts: dict[str, int] = Field(default_factory=dict)
    warnings: list[str] | None = None
    product: dict[str, Any] | None = None
    captions: list[dict[str, Any]] = Field(default_factory=list)
    video: dict[str, Any] = Field(default_factory=dict)


class AssetCollectionJobParams(JobParams):
    """What an ``asset_collection`` job keeps: the ads' headline source and the spec
    category it was asked for."""

    description: str | None = None
    catalog_product_id: int | None = None
    category: str | None = None


UGC_VIDEO_SECONDS = 10


def ugc_video(
    voiceover: Voiceover, image: ImageArray, facts: ProductFacts, seed: int
) -> OutputFile:
    """The pack's UGC video: a script written from the page's facts, spoken over the product
    photo brought to life, 9:16 with subtitles (by the provider when ``PIXELMILL_ROUTE_VIDEO``
    routes the video engine)."""
    return voiceover.make(
        image,
        "",
        aspect="9:16",
        subtitles=True,
        seed=seed,
        duration_seconds=UGC_VIDEO_SECONDS,
        product_name=shorten(facts.name, 60),
        product_description=facts.description,
    )


@dataclass(frozen=True)
class AdPackKind:
    """``ad_pack`` jobs."""

    scenes: MultiImageEngine
    ads: Engine
    limits: ImageLimits
    allow_loopback: bool
    scene_size: int
    voiceover: Voiceover
    copywriter: Engine
    """The registry's ``ad_copy`` engine (a language model when ``PIXELMILL_ROUTE_AD_COPY``
    routes it): the ads' lines and the captions."""
    result_format: str = "jpeg"
    subject: str = "product page"

    def _image_policy(self) -> FetchPolicy:
        return FetchPolicy(
            allow_loopback=self.allow_loopback,
            max_bytes=self.limits.max_bytes,
            timeout_s=20.0,
            max_redirects=5,
        )

    def _product_image(self, facts: ProductFacts) -> tuple[DecodedImage, ImageArray, str]:
        """The first of the page's images that decodes and shows a product, and its cut-out."""
        problems: list[str] = []
        for url in facts.images[:4]:
            try:
                decoded = decode_image(fetch_image_url(url, self._image_policy()), self.limits)
                cutout, how = cut_out(work_size(decoded.pixels))
                return decoded, cutout, how
            except (ImageInputError, EngineError) as exc:
                problems.append(f"{url}: {exc}")
        raise PageError(
            "none of the page's product images could be used (" + "; ".join(problems) + ")"
        )

    def plan(self, claim: Claim) -> Sequence[Planned]:
        p = claim.typed(AdPackJobParams)
        try:
            facts = read_product_page(p.url, page_policy(self.allow_loopback))
        except ImageInputError as exc:
            raise PageError(f"the product page could not be fetched: {exc}") from exc
        self.ads.load()
        decoded, cutout, _ = self._product_image(facts)
        category = guess_category(facts)
        product = {**facts.as_dict(), "category": facts.category or category}
        planned: list[Planned] = [
            PlannedFile(
                PRODUCT_POSITION, "product", partial(_json_file, "product", product), price=0
            )
        ]
        prices = p.parts
        if "images" in prices:
            self.scenes.load()
            params = ScenesParams(
                num_scenes=len(PHOTO_POSITIONS),
                category=category,
                seed=claim.seed,
                size=self.scene_size,
            )
            # The cut-out's own alpha is used as it is: no second segmentation.
            scenes = self.scenes.plan(EngineInputs(cutout), params)
            each = shares(int(prices["images"]), len(PHOTO_POSITIONS))
            for position, scene, price in zip(PHOTO_POSITIONS, scenes, each, strict=False):
                planned.append(PlannedImage(position, f"photo:{scene.label}", scene.render, price))
        if "ads" in prices or "captions" in prices:
            text = AdText.of(
                self.copywriter.run(
                    EngineInputs.none(),
                    AdCopyParams(
                        name=facts.name,
                        description=facts.description,
                        brand=facts.brand,
                        price=facts.price_label,
                        category=category,
                        url=facts.url,
                        seed=claim.seed,
                    ),
                )
            )
        if "ads" in prices:
            copy = AdCopy(
                headline=text.headline,
                tagline=text.tagline,
                cta="Shop now",
                price=facts.price_label,
            )
            each = shares(int(prices["ads"]), len(PACK_AD_STYLES))
            for i, (platform, style) in enumerate(PACK_AD_STYLES.items()):
                planned.append(
                    PlannedImage(
                        AD_POSITION + i,
                        f"ad:{platform}",
                        partial(_ad_output, cutout, platform, style, copy),
                        each[i],
                    )
                )
        if "captions" in prices:
            data = {"captions": text.captions, "method": text.method}
            planned.append(
                PlannedFile(
                    CAPTIONS_POSITION,
                    "captions",
                    partial(_json_file, "captions", data),
                    price=int(prices["captions"]),
                )
            )
        if "video" in prices:
            planned.append(
                PlannedFile(
                    VIDEO_POSITION,
                    "video",
                    partial(ugc_video, self.voiceover, decoded.pixels, facts, claim.seed),
                    price=int(prices["video"]),
                )
            )
        return planned

    def record(self, session: Session, claim: Claim, rendered: Rendered) -> None:
        if rendered.label == "product":
            jobs.merge_params(session, claim.job_id, product=rendered.output.data)
        elif rendered.label == "captions":
            jobs.merge_params(
                session, claim.job_id, captions=rendered.output.data.get("captions", [])
            )
        elif rendered.label == "video":
            jobs.merge_params(session, claim.job_id, video=rendered.output.data)


# ---- asset collections -----------------------------------------------------------------------

COLLECTION_SCENES = 3
COLLECTION_ADS: tuple[tuple[str, str], ...] = (
    ("instagram-square", "minimal"),
    ("pinterest", "elegant"),
)
COLLECTION_LABELS = (
    [f"scene {i + 1}" for i in range(COLLECTION_SCENES)]
    + ["silo"]
    + [f"ad:{platform}" for platform, _ in COLLECTION_ADS]
)
COLLECTION_HEADLINES: dict[str, str] = {
    Category.CLOTHING: "New season, new favourites",
    Category.JEWELRY: "Made to shine",
    Category.FURNITURE: "Make yourself at home",
    Category.ELECTRONICS: "Upgrade your everyday",
    Category.FOOD: "Taste the difference",
    Category.COSMETICS: "Your new glow",
    Category.ACCESSORIES: "The finishing touch",
    Category.SHOES: "Step into something new",
    Category.BAGS: "Carry it all",
    Category.WATCHES: "Right on time",
    Category.TOYS: "Playtime, upgraded",
}
"""Headlines of a collection's ads when no description is given (by the spec's category)."""
SILO_SIZE = 1600
SILO_FILL = 0.85


def silo(cutout: ImageArray, size: int = SILO_SIZE) -> OutputImage:
    """The cut-out centred on pure white, filling 85 % of a square (marketplace main image)."""
    a = cutout[..., 3] > 8
    rows, cols = np.flatnonzero(a.any(axis=1)), np.flatnonzero(a.any(axis=0))
    sub = cutout[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
    k = SILO_FILL * size / max(sub.shape[:2])
    w, h = max(1, round(sub.shape[1] * k)), max(1, round(sub.shape[0] * k))
    alpha = sub[..., 3:].astype(np.float32) / 255.0
    premult = np.dstack([sub[..., :3].astype(np.float32) * alpha, alpha])
    interp = cv2.INTER_AREA if k < 1 else cv2.INTER_CUBIC
    scaled = np.asarray(cv2.resize(premult, (w, h), interpolation=interp), np.float32)
    al = np.clip(scaled[..., 3:], 0.0, 1.0)
    canvas = np.full((size, size, 3), 255.0, np.float32)
    x, y = (size - w) // 2, (size - h) // 2
    region = canvas[y : y + h, x : x + w]
    region[:] = np.clip(scaled[..., :3], 0.0, 255.0) + region * (1.0 - al)
    pixels = np.asarray(np.clip(canvas + 0.5, 0, 255), np.uint8)
    return OutputImage(pixels, label="silo", data={"width": size, "height": size})


@dataclass(frozen=True)
class AssetCollectionKind:
    scenes: MultiImageEngine
    ads: Engine
    load_input: Callable[[str], DecodedImage]
    scene_size: int
    result_format: str = "jpeg"
    subject: str = "product"

    def plan(self, claim: Claim) -> list[PlannedImage]:
        image = work_size(self.load_input(claim.input_key).pixels)
        self.ads.load()
        self.scenes.load()
        cutout, _ = cut_out(image)
        params = ScenesParams(
            num_scenes=COLLECTION_SCENES,
            category=normalise_category(claim.category),
            seed=claim.seed,
            size=self.scene_size,
        )
        scenes = self.scenes.plan(EngineInputs(cutout), params)
        outputs = [(i, f"scene:{s.label}", s.render) for i, s in enumerate(scenes)]
        outputs.append((COLLECTION_SCENES, "silo", partial(silo, cutout)))
        p = claim.typed(AssetCollectionJobParams)
        description = p.description or ""
        headline = shorten(first_sentence(description), 60) if description else ""
        fallback = COLLECTION_HEADLINES.get(str(p.category), "New arrival")
        copy = AdCopy(headline=headline or fallback, cta="Shop now")
        for j, (platform, style) in enumerate(COLLECTION_ADS):
            render = partial(_ad_output, cutout, platform, style, copy)
            outputs.append((COLLECTION_SCENES + 1 + j, f"ad:{platform}", render))
        each = shares(ASSET_COLLECTION_PRICE, len(COLLECTION_LABELS))
        return [PlannedImage(at, label, render, each[at]) for at, label, render in outputs]

    def record(self, session: Session, claim: Claim, rendered: Rendered) -> None:
        return None
