"""The ad layouts, measured on their pixels: every platform at its exact size in every style,
every text block inside the canvas, and WCAG contrast of at least 4.5:1 between the colour
actually drawn and every pixel behind the text (the same canvas rendered without glyphs)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from pixelmill.engines.ads import (
    PLATFORMS,
    STYLE_NAMES,
    AdCopy,
    AdEngine,
    AdParams,
    AdRender,
    contrast_ratio,
    cut_out,
    render_ad,
)
from pixelmill.engines.ads.layout import Sheet, set_text
from pixelmill.engines.ads.typography import fit_text
from pixelmill.engines.base import EngineInputs
from tests.marketing.products import bottle, mug

COPY = AdCopy(
    headline="Hydration that keeps up with you",
    tagline="Double-walled steel keeps drinks cold for 24 hours.",
    cta="Shop now",
    price="$29",
)
LONG = AdCopy(
    headline="The extraordinarily comprehensive supercalifragilisticexpialidocious "
    "everyday carry bottle for mountains, offices, gyms and every commute in between",
    tagline=" ".join(["Built to last, made to be refilled, designed in a small studio."] * 4),
    cta="Get yours today with free shipping",
    price="€1299.99",
)


@pytest.fixture(scope="module")
def cutouts() -> dict[str, np.ndarray]:
    engine = AdEngine()
    engine.load()
    return {"bottle": cut_out(bottle())[0], "mug": cut_out(mug())[0]}


def measured_contrast(render: AdRender, box: tuple[int, int, int, int]) -> float:
    """The worst contrast of a text block, from pixels: the ink colour is read where the
    glyphs changed the canvas most, the background is every pixel of the glyph-free canvas
    inside the block's box."""
    x0, y0, x1, y1 = box
    drawn = render.pixels[y0:y1, x0:x1].astype(np.int32)
    behind = render.backing[y0:y1, x0:x1].astype(np.int32)
    diff = np.abs(drawn - behind).sum(axis=2)
    assert diff.max() > 60, "no glyphs were drawn in the block's box"
    ink = np.median(drawn[diff >= np.percentile(diff[diff > 0], 98)], axis=0)
    return float(contrast_ratio(ink, behind.reshape(-1, 3)).min())


@pytest.mark.parametrize("platform", list(PLATFORMS))
def test_every_platform_and_style_fits_and_reads(
    platform: str, cutouts: dict[str, np.ndarray]
) -> None:
    spec = PLATFORMS[platform]
    for i, style in enumerate(STYLE_NAMES):
        copy = LONG if i == 2 else COPY
        render = render_ad(cutouts["mug" if i % 2 else "bottle"], spec, style, copy)
        assert render.pixels.shape == (spec.height, spec.width, 3), (platform, style)
        roles = {b.role for b in render.blocks}
        assert {"headline", "tagline", "cta", "price"} <= roles, (platform, style, roles)
        for block in render.blocks:
            x0, y0, x1, y1 = block.box
            assert 0 <= x0 < x1 <= spec.width and 0 <= y0 < y1 <= spec.height, block
            assert block.contrast >= 4.5, block
            measured = measured_contrast(render, block.box)
            assert measured >= 4.4, (platform, style, block.role, measured)  # JPEG-free, AA ink


def test_text_is_auto_sized_down_and_wrapped_before_it_is_cut() -> None:
    short = fit_text("Sale", "sans-bold", 600, 200, max_size=120, min_size=20, max_lines=3)
    long = fit_text(
        "A much longer headline that must wrap over lines",
        "sans-bold",
        600,
        200,
        max_size=120,
        min_size=20,
        max_lines=3,
    )
    assert short.size == 120 and len(short.lines) == 1 and not short.truncated
    assert long.size < 120 and 1 < len(long.lines) <= 3 and not long.truncated
    assert long.width <= 600 and long.height <= 200
    cut = fit_text("word " * 200, "sans", 300, 60, max_size=40, min_size=18, max_lines=2)
    assert cut.truncated and cut.lines[-1].endswith("…") and cut.height <= 60 and cut.width <= 300


def test_a_panel_is_added_where_no_text_colour_reaches_4_5() -> None:
    # A mid-grey checkerboard: neither near-black nor white reaches 4.5:1 against all of it.
    tile = np.kron((np.indices((40, 60)).sum(axis=0) % 2), np.ones((10, 10), np.int64))
    grey = np.where(tile[..., None] == 1, 150, 95).astype(np.uint8).repeat(3, axis=2)
    sheet = Sheet(Image.fromarray(grey), Image.fromarray(grey.copy()))
    fitted = fit_text("Readable", "sans-bold", 500, 120, max_size=80, min_size=20, max_lines=1)
    block = set_text(sheet, "headline", fitted, (40, 100, 560, 300), 120, "center", (255, 255, 255))
    assert block.backing in ("scrim", "panel") and block.contrast >= 4.5
    render = AdRender(
        np.asarray(sheet.image), np.asarray(sheet.backing), [block], "test", (0, 0, 0)
    )
    assert measured_contrast(render, block.box) >= 4.4


def test_the_engine_reports_what_ran() -> None:
    engine = AdEngine()
    params = AdParams(platform="pinterest", style="elegant", headline="Hand-thrown mug")
    result = engine.run(EngineInputs(mug()), params)
    image = result.images[0].pixels
    assert image.shape == (1500, 1000, 3)
    assert (
        "U²-Net-p" in result.details["method"] and "no generative model" in result.details["method"]
    )
    assert result.details["min_contrast"] >= 4.5
    assert [b["role"] for b in result.details["text_blocks"]] == ["headline", "cta"]
