"""Each family's runner and engine on a tiny model of the family's exact signature whose answer
is known (tests/models/tiny.py): the result must match to within 1/255, so a normalisation,
channel-order, scaling or tiling mistake fails here without the real weights."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from pixelmill.engines.background.models import KNOWN_MODELS, ModelFile, RembgSaliency
from pixelmill.engines.base import EngineInputs
from pixelmill.engines.colorize import ColorizeEngine
from pixelmill.engines.colorize.engine import ColorizeParams
from pixelmill.engines.runtime.families.colorizer import Colorizer
from pixelmill.engines.runtime.families.face_restorer import FaceRestorer
from pixelmill.engines.runtime.families.inpainter import Inpainter
from pixelmill.engines.runtime.families.presence import best, best_runner
from pixelmill.engines.runtime.families.upscaler import Upscaler
from pixelmill.engines.runtime.tiling import run_tiled
from pixelmill.engines.upscale import UpscaleEngine
from pixelmill.engines.upscale.engine import UpscaleParams
from tests.models import tiny

RNG = np.random.default_rng(59)


def photo(h: int, w: int) -> np.ndarray:
    """Noise with structure: every channel different, no two pixels alike."""
    base = RNG.integers(0, 256, (h, w, 3), dtype=np.uint8)
    ramp = np.linspace(0, 255, w, dtype=np.float32)[np.newaxis, :, np.newaxis]
    return np.asarray((base.astype(np.float32) * 0.6 + ramp * (0.2, 0.4, 0.1)), np.uint8)


def nearest(image: np.ndarray, scale: int) -> np.ndarray:
    return np.repeat(np.repeat(image, scale, axis=0), scale, axis=1)


def test_tiling_stitches_cores_exactly_and_shifts_fixed_windows_inside() -> None:
    image = photo(97, 150)
    seen: list[tuple[int, int]] = []

    def shifted_nearest(tile: np.ndarray) -> np.ndarray:
        seen.append(tile.shape[:2])
        return nearest(tile, 3)

    out = run_tiled(image, shifted_nearest, window=40, overlap=6, scale=3, fixed=True)
    assert np.array_equal(out, nearest(image, 3))
    assert set(seen) == {(40, 40)} and len(seen) == 4 * 6  # cores of 28: 4 rows, 6 columns
    small = photo(20, 30)  # smaller than the window: padded, then cropped back
    assert np.array_equal(run_tiled(small, lambda t: t, window=40, overlap=6, fixed=True), small)
    free = run_tiled(image, lambda t: t + 0, window=64, overlap=8)
    assert np.array_equal(free, image)


@pytest.mark.parametrize("side", [None, 64])
def test_the_upscaler_is_a_nearest_neighbour_resize_through_its_tiles(
    tmp_path: Path, side: int | None
) -> None:
    runner = Upscaler(tiny.nearest_upscaler(tmp_path / "real_esrgan_x2.onnx", 2, side), "x2")
    runner.load()
    assert runner.scale == 2 and runner.fixed == (side is not None)
    image = photo(301, 517)  # several 256-pixel windows (or 64), ragged edges
    out = runner.upscale(image)
    assert out.shape == (602, 1034, 3)
    assert np.abs(out.astype(int) - nearest(image, 2)).max() <= 1


def test_the_upscale_engine_uses_the_model_present_and_says_so(tmp_path: Path) -> None:
    tiny.nearest_upscaler(tmp_path / "real_esrgan_x2.onnx", 2)
    engine = UpscaleEngine(tmp_path)
    image = photo(120, 90)
    rgba = np.dstack([image, np.full(image.shape[:2], 255, np.uint8)])
    for source, want in ((image, nearest(image, 4)), (rgba, nearest(rgba, 4))):
        result = engine.run(EngineInputs(source), UpscaleParams(scale=4, quality="balanced"))
        assert result.details["model"] == "real-esrgan-x2"
        assert "PIXELMILL_MODELS_DIR" in result.details["method"]
        assert result.details["passes"] == [2, 2]
        assert np.abs(result.images[0].pixels.astype(int) - want).max() <= 1
    fast = engine.run(EngineInputs(image), UpscaleParams(scale=2, quality="fast"))
    assert "model" not in fast.details
    offline = UpscaleEngine(tmp_path / "empty").run(EngineInputs(image), UpscaleParams(scale=2))
    assert "model" not in offline.details and "pixelmill-sr" in offline.details["method"]


@pytest.mark.parametrize("invert", [False, True])
def test_the_inpainter_fills_only_the_hole_with_what_the_model_answers(
    tmp_path: Path, invert: bool
) -> None:
    tiny.inpainter(tmp_path / "lama_fp32.onnx", invert=invert)
    runner = best_runner("inpaint", tmp_path)
    assert isinstance(runner, Inpainter) and runner.name == "lama"
    image = photo(700, 900)
    hole = np.zeros(image.shape[:2], np.uint8)
    hole[40:60, 30:200] = 1  # a caption near the corner: its window is shifted inside
    hole[600:690, 700:890] = 1  # another, far away: a window of its own
    hole[300:320, 420:430] = 1
    out = runner.fill(image, hole)
    inside = hole > 0
    assert np.array_equal(out[~inside], image[~inside])  # nothing else moves
    want = (255 - image) if invert else image
    assert np.abs(out[inside].astype(int) - want[inside]).max() <= 1


def test_the_inpainter_pads_a_small_image_and_shrinks_a_big_hole(tmp_path: Path) -> None:
    runner = Inpainter(tiny.inpainter(tmp_path / "lama_fp32.onnx", invert=True), "lama")
    runner.load()
    small = photo(120, 200)
    hole = np.zeros(small.shape[:2], bool)
    hole[50:70, 60:140] = True
    out = runner.fill(small, hole)
    assert np.array_equal(out[~hole], small[~hole])
    assert np.abs(out[hole].astype(int) - (255 - small[hole]).astype(int)).max() <= 1
    flat = np.full((900, 1300, 3), (180, 90, 30), np.uint8)  # flat: resizing changes nothing
    big = np.zeros(flat.shape[:2], bool)
    big[100:800, 100:1200] = True
    out = runner.fill(flat, big)
    assert np.abs(out[big].astype(int) - (75, 165, 225)).max() <= 1


def test_the_colorizer_keeps_lightness_and_takes_the_models_chroma(tmp_path: Path) -> None:
    tiny.colorizer(tmp_path / "ddcolor_artistic.onnx", a=25.0, b=-40.0)
    engine = ColorizeEngine(tmp_path)
    grey = np.repeat(np.linspace(30, 220, 160, dtype=np.uint8)[np.newaxis, :, np.newaxis], 90, 0)
    grey = np.repeat(grey, 3, axis=2)
    result = engine.run(EngineInputs(grey), ColorizeParams())
    assert result.details["model"] == "ddcolor-artistic" and result.details["mode"] == "model"
    lab = cv2.cvtColor(grey.astype(np.float32) / 255.0, cv2.COLOR_RGB2LAB)
    lab[..., 1], lab[..., 2] = 25.0, -40.0
    want = np.clip(np.round(cv2.cvtColor(lab, cv2.COLOR_LAB2RGB) * 255.0), 0, 255)
    assert np.abs(result.images[0].pixels.astype(int) - want.astype(int)).max() <= 1
    runner = Colorizer(tmp_path / "ddcolor_artistic.onnx", "ddcolor-artistic")
    runner.load()
    assert runner.side == 256
    assert np.abs(runner.colorize(grey).astype(int) - want.astype(int)).max() <= 1


def test_a_matting_model_returning_its_red_channel_gives_the_red_channel_as_mask(
    tmp_path: Path,
) -> None:
    path = tiny.red_saliency(tmp_path / "u2net.onnx")
    saliency = RembgSaliency(ModelFile("u2net", path, KNOWN_MODELS["u2net"]))
    saliency.load()
    image = photo(320, 320)
    mask = saliency.coarse(image)
    red = image[..., 0].astype(np.float32)
    want = (red - red.min()) / (red.max() - red.min())
    assert np.abs(mask - want).max() <= 1 / 255


def test_best_picks_the_ranked_model_and_skips_a_broken_file(tmp_path: Path) -> None:
    (tmp_path / "lama_fp32.onnx").write_bytes(b"cut short")
    assert best("inpaint", tmp_path) is not None
    assert best_runner("inpaint", tmp_path) is None  # does not open: the engine runs offline
    (tmp_path / "codeformer.onnx").write_bytes(b"x")  # non-commercial: never chosen by itself
    assert best("enhance", tmp_path) is None
    assert best("upscale", None) is None


FACE = [(180.0, 200.0), (260.0, 202.0), (221.0, 250.0), (220.0, 290.0)]
"""Eyes (image-left first), nose tip and mouth centre of a face about 200 pixels wide."""


@pytest.mark.parametrize("weight", [False, True])
def test_the_face_restorer_round_trip_and_its_output_scale(tmp_path: Path, weight: bool) -> None:
    yy, xx = np.mgrid[0:420, 0:440].astype(np.float32)
    smooth = np.dstack([40 + 0.3 * xx, 60 + 0.25 * yy, 200 - 0.2 * xx - 0.1 * yy])
    image = np.asarray(np.round(smooth), np.uint8)
    identity = FaceRestorer(tiny.face_restorer(tmp_path / "id.onnx", weight=weight), "id")
    identity.load()
    assert identity.has_weight == weight
    out = identity.restore(image, [FACE])
    assert np.abs(out.astype(int) - image).max() <= 1  # -1..1 in, -1..1 out, warped back
    flat = FaceRestorer(tiny.face_restorer(tmp_path / "c.onnx", (0.6, -0.2, -1.0)), "c")
    flat.load()
    flat.blend = 1.0
    out = flat.restore(image, [FACE])
    centre = out[240:260, 210:230].reshape(-1, 3).astype(int)  # the nose: inside the mask
    assert np.abs(centre - (204, 102, 0)).max() <= 1
    assert np.array_equal(out[:20], image[:20])  # far from the face: untouched


def test_the_enhance_engine_adds_face_restore_with_the_model_present(tmp_path: Path) -> None:
    from skimage import data as skdata

    from pixelmill.engines.enhance import EnhanceEngine
    from pixelmill.engines.enhance.engine import EnhanceParams

    tiny.face_restorer(tmp_path / "gfpgan_1.4.onnx", (0.6, -0.2, -1.0))
    engine = EnhanceEngine(max_workers=2, models_dir=tmp_path)
    astronaut = np.ascontiguousarray(skdata.astronaut())  # type: ignore[no-untyped-call]
    result = engine.run(EngineInputs(astronaut), EnhanceParams())
    assert result.details["model"] == "gfpgan-1.4"
    assert "Face Restore" in [v["label"] for v in result.details["variants"]]
    restored = next(i for i in result.images if i.label == "Face Restore").pixels
    changed = np.abs(restored.astype(int) - astronaut).sum(axis=2) > 60
    ys, xs = np.nonzero(changed)
    assert 0.2 * 512 < xs.mean() < 0.6 * 512 and ys.mean() < 0.4 * 512  # her face, top left
    plain = EnhanceEngine(max_workers=2).run(EngineInputs(astronaut), EnhanceParams())
    assert "model" not in plain.details
