"""The fast paths of background removal keep its output: the fast guided filter, the coarse
masks made at the filter's solving size and the PNG encoder.

``reference/*.png`` are the cut-outs' binary masks (alpha > 127) for four photos at
~1 MP; the engine must still agree with them (IoU >= 0.99). They were first made before these
speed-ups (at 77e0f35, the parent of eabdd54: full-resolution guided filter and coarse masks)
and made again when the trimap alpha came in (``background/trimap.py``: the cat's chest fur,
a ghost before, is now part of the cut-out): IoU of the new masks with the old ones 0.903 and
0.967 on the cat (auto, product), 0.978-0.980 on the thin rocket, >= 0.995 on the others. The
warm-arena model session (``OnnxModel(warm_arena=True)``) gives the same outputs as the plain
one (max difference 0.0).
"""

from __future__ import annotations

import io
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image
from skimage import data

from pixelmill.engines.background.engine import BackgroundRemovalEngine, BackgroundRemovalParams
from pixelmill.engines.base import EngineInputs
from pixelmill.engines.runtime import segmentation
from pixelmill.engines.runtime.onnx import OnnxModel
from pixelmill.imaging.encode import encode_image

REFERENCE = Path(__file__).parent / "reference"

# (width, height): the photos scaled (bicubic) to about one megapixel, as the references were.
SIZES = {
    "astronaut": (1000, 1000),
    "coffee": (1225, 816),
    "chelsea": (1226, 816),
    "rocket": (1224, 817),
}


def one_megapixel(name: str) -> npt.NDArray[np.uint8]:
    w, h = SIZES[name]
    rgb = np.ascontiguousarray(getattr(data, name)(), dtype=np.uint8)
    return np.asarray(cv2.resize(rgb, (w, h), interpolation=cv2.INTER_CUBIC), dtype=np.uint8)


def iou(a: npt.NDArray[np.bool_], b: npt.NDArray[np.bool_]) -> float:
    union = int((a | b).sum())
    return 1.0 if union == 0 else int((a & b).sum()) / union


@pytest.fixture(scope="module")
def engine() -> BackgroundRemovalEngine:
    eng = BackgroundRemovalEngine()
    eng.load()
    return eng


@pytest.mark.parametrize("kind", ["auto", "product"])
@pytest.mark.parametrize("name", sorted(SIZES))
def test_cutout_mask_matches_the_reference(
    engine: BackgroundRemovalEngine, name: str, kind: str
) -> None:
    reference = np.asarray(Image.open(REFERENCE / f"{name}-{kind}.png")) > 0
    rgb = one_megapixel(name)
    result = engine.run(EngineInputs(rgb, {}), BackgroundRemovalParams(type=kind))
    alpha = result.images[0].pixels[..., 3]
    assert alpha.shape == reference.shape
    assert reference.mean() > 0.01  # the reference has a subject to compare against
    assert iou(alpha > 127, reference) >= 0.99


def test_fast_guided_filter_is_the_guided_filter_at_step_one() -> None:
    """With no subsampling the fast filter's closed-form 3x3 solve is exactly the guided filter
    OpenCV computes (so only the subsampling differs from the exact path)."""
    rgb = one_megapixel("coffee")[:400, :600].copy()
    mask = segmentation.coarse_mask(rgb)
    r = 5
    exact = cv2.ximgproc.guidedFilter(rgb.astype(np.float32) / 255.0, mask, r, 1e-2)
    fast = segmentation._fast_guided_filter(rgb, mask, r, 1)
    assert np.abs(fast - np.clip(exact, 0.0, 1.0)).max() < 1e-3


def test_snap_to_edges_takes_a_mask_at_the_solving_size() -> None:
    rgb = one_megapixel("chelsea")
    h, w = rgb.shape[:2]
    small = segmentation.guide_size(h, w)
    assert small[0] < h and small[1] < w  # ~1 MP is subsampled
    full = segmentation.snap_to_edges(rgb, segmentation.coarse_mask(rgb))
    from_small = segmentation.snap_to_edges(rgb, segmentation.coarse_mask(rgb, small))
    assert from_small.shape == (h, w) and from_small.dtype == np.float32
    assert iou(full > 0.5, from_small > 0.5) >= 0.99


@pytest.mark.parametrize("shape", [(9, 7), (9, 7, 3), (9, 7, 4), (300, 201, 3), (200, 301, 4)])
def test_png_round_trips_exactly(shape: tuple[int, ...]) -> None:
    pixels = np.random.default_rng(7).integers(0, 256, shape, dtype=np.uint8)
    encoded = encode_image(pixels, "png")
    decoded = Image.open(io.BytesIO(encoded))
    assert decoded.format == "PNG"
    assert (
        decoded.mode == {2: "L", 3: "RGB", 4: "RGBA"}[len(shape) if len(shape) == 2 else shape[2]]
    )
    assert np.array_equal(np.asarray(decoded), pixels)


def test_png_of_a_cutout_is_no_larger_than_pillows(engine: BackgroundRemovalEngine) -> None:
    """The fast settings do not buy speed with file size: within 10 % of Pillow at level 3."""
    rgba = engine.run(EngineInputs(one_megapixel("coffee"), {}), BackgroundRemovalParams())
    pixels = rgba.images[0].pixels
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG", compress_level=3)
    assert len(encode_image(pixels, "png")) <= 1.1 * len(buffer.getvalue())


def test_the_warm_arena_session_gives_the_plain_sessions_outputs() -> None:
    """A run alone goes through the session that keeps its memory arena; a run overlapping it
    through the arena-less one: both give the same mask."""
    x = segmentation._preprocess(one_megapixel("coffee"))
    model = segmentation.U2NETP
    alone = model.run_single(x)[0]
    assert model._arena_session.loaded
    with model._arena_free:  # another run holds the arena: this one takes the plain session
        overlapping = model.run_single(x)[0]
    assert np.array_equal(alone, overlapping)


@pytest.mark.parametrize("name", sorted(SIZES))
def test_the_derived_graph_gives_the_wheels_u2netp_outputs(name: str) -> None:
    """``models/u2netp-320.onnx`` (``training/u2netp/derive.py``: fixed input, constant
    upsampling scales, the fused output only) is rembg's ``u2netp.onnx`` in another layout: on
    real photos its mask is the original's to float rounding (measured: at most 1.1e-5)."""
    original = OnnxModel(segmentation.U2NETP_SOURCE)
    x = segmentation._preprocess(one_megapixel(name))
    want = original.run_single(x)[0]
    got = segmentation.U2NETP.run_single(x)
    assert len(got) == 1 and got[0].shape == want.shape == (1, 1, 320, 320)
    assert float(np.abs(got[0] - want).max()) < 1e-4
    assert iou(got[0] > 0.5, want > 0.5) >= 0.999
