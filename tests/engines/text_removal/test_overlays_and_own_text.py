"""Issue 62: text laid over a photo is removed whole; the photo's own text is kept.

Photos are scikit-image's bundled samples (CC0 / public domain), the text is rendered here with
the DejaVu faces the project installs, so nothing of the corpus (``docs/corpora-text.md``) is
needed. Each test states the measured figure its bound sits under.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image, ImageDraw, ImageFont
from pydantic import ValidationError
from skimage import data

from pixelmill.engines.base import EngineInputs, EngineResult
from pixelmill.engines.runtime.fonts import FONT_DIRS
from pixelmill.engines.runtime.ocr import read_text
from pixelmill.engines.text_removal.engine import TextRemovalEngine, TextRemovalParams

U8 = npt.NDArray[np.uint8]
Box = tuple[int, int, int, int]
ENGINE = TextRemovalEngine()


def sample(name: str) -> U8:
    """A bundled scikit-image sample (offline) as a uint8 array."""
    return np.asarray(getattr(data, name)(), np.uint8)


def font(name: str, size: int) -> ImageFont.FreeTypeFont:
    for folder in FONT_DIRS:
        if (folder / name).is_file():
            return ImageFont.truetype(str(folder / name), size)
    pytest.skip(f"{name} is not installed")


def draw_lines(
    clean: U8,
    lines: list[tuple[str, tuple[int, int], str, int, tuple[int, int, int]]],
) -> tuple[U8, list[Box]]:
    """``clean`` with each ``(text, (x, y), font file, size, colour)`` drawn opaque; the boxes."""
    img = Image.fromarray(clean)
    d = ImageDraw.Draw(img)
    boxes = []
    for text, xy, face, size, colour in lines:
        f = font(face, size)
        boxes.append(tuple(int(v) for v in d.textbbox(xy, text, font=f)))
        d.text(xy, text, fill=colour, font=f)
    return np.asarray(img, np.uint8), boxes  # type: ignore[return-value]


def region(shape: tuple[int, ...], boxes: list[Box], grow: int = 3) -> npt.NDArray[np.bool_]:
    m = np.zeros(shape[:2], bool)
    for x0, y0, x1, y1 in boxes:
        m[max(0, y0 - grow) : y1 + grow, max(0, x0 - grow) : x1 + grow] = True
    return m


def psnr_in(a: U8, b: U8, where: npt.NDArray[np.bool_]) -> float:
    mse = float(np.mean((a[where].astype(np.float64) - b[where].astype(np.float64)) ** 2))
    return 99.0 if mse == 0 else float(10 * np.log10(255.0**2 / mse))


def run(image: U8, **params: object) -> EngineResult:
    return ENGINE.run(EngineInputs(image), TextRemovalParams.model_validate(params))


def words(image: U8) -> str:
    return " ".join(line.text for line in read_text(image)).lower()


def carton_scene() -> tuple[U8, U8, Box, list[Box]]:
    """scikit-image's grass with a lit carton in perspective whose brand "NORDA" is printed on
    it (the photo's own text), and a two-line caption beside it: (clean, observed, the brand's
    box, the caption's boxes)."""
    grass = sample("grass")
    clean = np.ascontiguousarray(np.repeat(grass[..., None], 3, axis=2)[::2, ::2])  # 256 x 256
    cw, ch = 96, 120
    face = Image.new("RGB", (cw, ch), (206, 120, 40))
    d = ImageDraw.Draw(face)
    d.text((10, 28), "NORDA", fill=(245, 240, 230), font=font("DejaVuSerif-Bold.ttf", 20))
    d.rectangle((12, 80, 84, 88), fill=(245, 240, 230))
    shade = np.linspace(1.1, 0.8, cw, dtype=np.float32)[None, :, None]
    lit = np.clip(np.asarray(face, np.float32) * shade, 0, 255).astype(np.uint8)
    lit = cv2.GaussianBlur(lit, (0, 0), 0.7)
    src = np.array([[0, 0], [cw, 0], [cw, ch], [0, ch]], np.float32)
    dst = np.array([[150, 70], [246, 62], [246, 182], [150, 190]], np.float32)
    m = cv2.getPerspectiveTransform(src, dst)
    warped = cv2.warpPerspective(lit, m, (256, 256))
    inside = cv2.warpPerspective(np.full((ch, cw), 255, np.uint8), m, (256, 256)) > 127
    clean[inside] = warped[inside]
    quad = np.array([[[8, 26], [90, 26], [90, 52], [8, 52]]], np.float32)
    corners = cv2.perspectiveTransform(quad, m)[0]
    brand = (
        int(corners[:, 0].min()),
        int(corners[:, 1].min()),
        int(corners[:, 0].max()) + 1,
        int(corners[:, 1].max()) + 1,
    )
    observed, boxes = draw_lines(
        clean,
        [
            ("FREE", (12, 90), "DejaVuSans-Bold.ttf", 28, (255, 255, 255)),
            ("SHIPPING", (12, 122), "DejaVuSans-Bold.ttf", 22, (255, 255, 255)),
        ],
    )
    return clean, observed, brand, boxes


def test_the_newcomers_cat_loses_both_lines_without_a_ghost() -> None:
    clean = sample("chelsea")
    observed, boxes = draw_lines(
        clean,
        [
            ("(c) stockphoto", (24, 30), "DejaVuSans-BoldOblique.ttf", 34, (255, 221, 0)),
            ("SALE 50% OFF", (24, 230), "DejaVuSans-Bold.ttf", 40, (255, 255, 255)),
        ],
    )
    out = run(observed).images[0].pixels
    read = words(out)
    for word in ("stock", "photo", "sale", "off", "50"):
        assert word not in read, read
    where = region(clean.shape, boxes)
    before, after = psnr_in(observed, clean, where), psnr_in(out, clean, where)
    assert after >= before + 6.0, (before, after)
    err = np.abs(out.astype(np.int16) - clean.astype(np.int16))[where]
    assert float(err.mean()) <= 8.0


@pytest.mark.xfail(
    strict=True,
    reason="issue 62, not met: the overlay network covers the carton's printed brand as an "
    "overlay (as it covers most signs of the corpus) and the learned step fills it",
)
def test_the_cartons_printed_brand_stays_and_the_caption_beside_it_goes() -> None:
    clean, observed, brand, boxes = carton_scene()
    result = run(observed)
    out = result.images[0].pixels
    own = region(clean.shape, [brand], grow=2)
    assert np.abs(out.astype(np.int16) - clean.astype(np.int16))[own].max() <= 2
    where = region(clean.shape, boxes)
    assert psnr_in(out, clean, where) >= psnr_in(observed, clean, where) + 6.0
    assert "shipping" not in words(out)


def test_scope_all_removes_the_printed_brand_too() -> None:
    clean, observed, brand, _ = carton_scene()
    out = run(observed, scope="all").images[0].pixels
    assert "norda" not in words(out)
    own = region(clean.shape, [brand], grow=0)
    assert np.abs(out.astype(np.int16) - clean.astype(np.int16))[own].mean() > 5


def test_two_touching_captions_both_go() -> None:
    clean = sample("coffee")[::2, ::2].copy()
    f1 = font("DejaVuSansCondensed-Bold.ttf", 30)
    top = ImageDraw.Draw(Image.new("L", (1, 1))).textbbox((20, 40), "NEW ARRIVAL", font=f1)
    observed, boxes = draw_lines(
        clean,
        [
            ("NEW ARRIVAL", (20, 40), "DejaVuSansCondensed-Bold.ttf", 30, (0, 0, 0)),
            # the second line's ink starts where the first one's ends
            ("shop now", (20, int(top[3]) - 6), "DejaVuSans-Bold.ttf", 26, (220, 30, 30)),
        ],
    )
    out = run(observed).images[0].pixels
    read = words(out)
    assert "arrival" not in read and "shop" not in read, read
    where = region(clean.shape, boxes)
    assert psnr_in(out, clean, where) >= psnr_in(observed, clean, where) + 6.0


def test_scope_is_overlays_or_all() -> None:
    assert TextRemovalParams().scope == "overlays"
    assert TextRemovalParams.model_validate({"scope": "all"}).scope == "all"
    with pytest.raises(ValidationError):
        TextRemovalParams.model_validate({"scope": "everything"})


def test_the_caption_beside_the_carton_goes() -> None:
    clean, observed, _, boxes = carton_scene()
    out = run(observed).images[0].pixels
    where = region(clean.shape, boxes)
    assert psnr_in(out, clean, where) >= psnr_in(observed, clean, where) + 6.0
    assert "shipping" not in words(out)
