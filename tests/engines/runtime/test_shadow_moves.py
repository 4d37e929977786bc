"""The guided avatar's floor shadow, background removal's shadows (on a colour and on a
transparent result) and the ad product's shadow are drawn by the shadow kit
(``engines/runtime/shadows.py``) and give the pixels the engines' own copies gave: SHA-256
digests recorded from those copies before the move (``avatar/guided.py:_floor_shadow``,
``background/canvas.py:shadow_transmittance`` and ``_transparent_shadow``, the shadow in
``ads/layout.py:place_product``)."""

from __future__ import annotations

import hashlib
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from pixelmill.engines.ads.layout import STYLES, place_product
from pixelmill.engines.avatar import GuidedAvatarEngine, GuidedAvatarParams
from pixelmill.engines.background.canvas import render
from pixelmill.engines.background.options import CutoutSpec, ShadowKind
from pixelmill.engines.base import EngineInputs, ImageArray

RECORDED = {
    "avatar_0": "5276f4ba82312abd97c0d2b0fef0be93",
    "avatar_1": "cce97c1e1286673744653b8136927574",
    "avatar_2": "021957013c178fea681e98a6b7e89911",
    "cutout_soft_clear_same": "ce06f9d25dc5d0b7f0f4b462ce985472",
    "cutout_soft_clear_crop": "fea29ab52f37753fabe66640d9e6b433",
    "cutout_soft_opaque_same": "c3ca862dc38df929bd7622bb50bb71dd",
    "cutout_soft_opaque_crop": "84ede26bd91bb5a33f8ddb9f76951eb7",
    "cutout_hard_clear_same": "174b9cd60d2d3cd0a84451c1ee67bff9",
    "cutout_hard_clear_crop": "3ddaa6e719c3835ccf0dc3c64196f664",
    "cutout_hard_opaque_same": "f92cd5ffebe39b7f580e2bc7f0cf32fb",
    "cutout_hard_opaque_crop": "3c69a32d4d853d349d4892f4fff8a2b2",
    "cutout_floating_clear_same": "31c60e0aae7ed3f87f5d1f497e986859",
    "cutout_floating_clear_crop": "58debd35d34dc0dc8f8b21249be26ee5",
    "cutout_floating_opaque_same": "7d94acea8519c61e047c3b060d89cac2",
    "cutout_floating_opaque_crop": "448c50482cec8acbecba78418ae794f6",
    "ad_minimal": "8782142d815c0f8a90055aa02ba1e8a8",
    "ad_bold": "0c0a8899c21070add6df4b9bddbf0ce4",
    "ad_elegant": "1ad2ff79cf86e04111867a637dcedb05",
    "ad_vibrant": "8e36aac0dd0868d1eee0336f3dafe0f7",
    "ad_dark": "3e82bd5a4dbd35ef33c7be6f35763faf",
    "ad_dark_at_edge": "881d1d5e36ef2bf847477c6bd33415a7",
}

AVATARS = [
    ("woman, yellow dress, beach", 256),
    ("little boy, red t-shirt, shorts, park, waving", 320),
    ("man, navy suit, office", 640),  # supersampled 2x, the others 3x
]


def _digest(pixels: npt.NDArray[Any]) -> str:
    return hashlib.sha256(np.ascontiguousarray(pixels).tobytes()).hexdigest()[:32]


@pytest.mark.parametrize("index", range(len(AVATARS)))
def test_guided_avatar_is_drawn_as_before(index: int) -> None:
    prompt, height = AVATARS[index]
    params = GuidedAvatarParams(prompt=prompt, seed=3, height=height)
    pixels = GuidedAvatarEngine().run(EngineInputs.none(), params).images[0].pixels
    assert _digest(pixels) == RECORDED[f"avatar_{index}"]


def _cutout() -> ImageArray:
    alpha = np.zeros((72, 90), np.uint8)
    cv2.ellipse(alpha, (45, 34), (16, 24), 0, 0, 360, 255, -1, cv2.LINE_AA)
    yy, xx = np.mgrid[0:72, 0:90]
    rgb = np.dstack([xx * 2, yy * 3, 255 - xx - yy]).astype(np.uint8)
    return np.dstack([rgb, alpha])


def _spec(kind: ShadowKind | None, opaque: bool, crop: bool) -> CutoutSpec:
    margin = ((0.1, True), (0.2, True), (0.3, True), (0.2, True)) if crop else ((0.0, False),) * 4
    bg = (240, 240, 240) if opaque else None
    return CutoutSpec(shadow=kind, bg_color=bg, crop=crop, margin=margin)


@pytest.mark.parametrize("kind", ["soft", "hard", "floating"])
@pytest.mark.parametrize("opaque", [False, True])
@pytest.mark.parametrize("crop", [False, True])
def test_cutout_shadows_are_drawn_as_before(kind: ShadowKind, opaque: bool, crop: bool) -> None:
    subject = (29, 10, 33, 49)
    shaded = render(_cutout(), _spec(kind, opaque, crop), subject)
    plain = render(_cutout(), _spec(None, opaque, crop), subject)
    name = f"cutout_{kind}_{'opaque' if opaque else 'clear'}_{'crop' if crop else 'same'}"
    assert _digest(shaded.pixels) == RECORDED[name]
    assert shaded.shadow is not None and shaded.shadow.startswith(kind)
    assert not np.array_equal(shaded.pixels, plain.pixels)  # a shadow was drawn


def _product() -> ImageArray:
    alpha = np.zeros((60, 40), np.uint8)
    cv2.ellipse(alpha, (20, 30), (15, 26), 0, 0, 360, 255, -1, cv2.LINE_AA)
    yy, xx = np.mgrid[0:60, 0:40]
    return np.dstack([xx * 5, yy * 4, 200 - yy, alpha]).astype(np.uint8)


@pytest.mark.parametrize("name", [*STYLES, "dark_at_edge"])
def test_ad_product_shadow_is_drawn_as_before(name: str) -> None:
    canvas = np.full((120, 100, 3), 0.7, np.float32)
    edge = name == "dark_at_edge"
    box = (0, 50, 60, 120) if edge else (10, 10, 90, 100)
    place_product(canvas, _product(), box, STYLES["dark" if edge else name])
    assert _digest(canvas) == RECORDED[f"ad_{name}"]
