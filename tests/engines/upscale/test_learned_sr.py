"""pixelmill-sr: the learned super-resolution networks shipped inside the package."""

from __future__ import annotations

import socket
from importlib.resources import files
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image
from skimage import data as skdata

from pixelmill.engines.runtime.onnx import OnnxModel
from pixelmill.engines.upscale import learned
from pixelmill.engines.upscale.context import image_stats
from pixelmill.engines.upscale.folded import CONTEXT_SUFFIX, PLAIN_SUFFIX, FoldedNetwork
from pixelmill.engines.upscale.learned import model_info, upscale_learned

U8 = npt.NDArray[np.uint8]
# Every network shipped, each also folded (training/sr/fold.py).
STEMS = ("pixelmill-sr-x2", "pixelmill-sr-x2-high", "pixelmill-sr-x4", "pixelmill-sr-x4-high")

# Fixed real photos never trained on (scikit-image), scored against PIL bicubic upscaling of the
# same input (PSNR-Y, `scale` pixels shaved). Measured with the committed weights (full tables in
# models/MODEL_CARD.md); each margin is set a little under the measurement, so a regression in the
# weights or the pipeline fails here.
# Clean input (PIL bicubic downscale with antialiasing), coffee: x2 +1.81 dB (stage 13; stage 12
# +1.62, stage 10 +1.48, stage 5 +1.34), x4 +1.21 dB (stage 13; stage 9 +1.01).
MIN_GAIN_DB = {2: 1.5, 4: 1.0}
# Non-antialiased x2 input (cv2.INTER_CUBIC downscale, what cv2.resize gives; the clean-only
# weights lost about 2 dB to bicubic here). balanced (stage 13): coffee +0.01, astronaut +0.63,
# camera +0.44 dB (stage 12: -0.02, +0.91, +0.42; stage 10: +0.09, +1.00, +0.46; before image
# context: -0.13, +0.58, +0.32); high (stage 13): +0.98, +1.26, +0.60 (stage 12: +1.02, +1.29,
# +0.62).
MIN_MEAN_GAIN_NOAA_X2_DB = 0.15
MIN_PHOTO_GAIN_NOAA_X2_DB = {"balanced": -0.05, "high": 0.5}
# Nearest-neighbour x2 input (PIL and OpenCV keep opposite pixels of each 2x2 block), mean of
# coffee, astronaut and camera: balanced +0.10 (PIL) / +0.10 (OpenCV) (stage 13, astronaut alone
# -0.46 / -0.50; stage 12 +0.17 / +0.18; stage 5 +0.14 / +0.11), high +0.20 / +0.18 (stage 13;
# astronaut alone -0.07 / -0.10; stage 12 +0.22 / +0.20). The networks before image context:
# -0.3 to -0.4 dB.
MIN_MEAN_GAIN_NEAREST_X2_DB = {"balanced": 0.0, "high": 0.1}
# Nearest-neighbour x4 input, mean of the same three photos (the x4 network has image context
# since stage 6): stage 13 (a 3-expert mixture) PIL +0.62 (coffee / astronaut / camera +0.78 /
# +0.39 / +0.68), OpenCV +0.52 (+0.85 / -0.09 / +0.81); stage 9 PIL +0.62, OpenCV +0.46. The
# x4 network before image context: -0.08 / -0.02 on average over the seven scikit-image photos.
# high x4 (issue 44, grown from balanced x4, with its mirror pass): PIL +0.82 (+0.97 / +0.62 /
# +0.87), OpenCV +0.37 (+0.64 / -0.10 / +0.58).
MIN_MEAN_GAIN_NEAREST_X4_DB = {
    ("balanced", "pil"): 0.4,
    ("balanced", "cv2"): 0.3,
    ("high", "pil"): 0.6,
    ("high", "cv2"): 0.25,
}
# high over balanced at x2, coffee and astronaut: clean +0.32 / +0.34, no-antialias +0.96 /
# +0.59 dB (issue 44's 32 x 12 network; stage 13 +0.24 / +0.26 and +0.97 / +0.63; stage 12
# +0.36 / +0.30 and +1.04 / +0.39). Held-out clean lead +0.37, scikit-image's +0.25
# (models/MODEL_CARD.md, "High worth its cost").
MIN_HIGH_OVER_BALANCED_DB = 0.25
# high over balanced at x4, coffee, astronaut and camera: clean +0.16 / +0.16 / +0.12,
# no-antialias +0.23 / +0.32 / +0.15 dB (held-out clean +0.09, the mean of 11 degradations
# +0.09): short of the +0.3 issue 44 asks, and documented so.
MIN_HIGH_OVER_BALANCED_X4_DB = 0.08


def _psnr_y(a: U8, b: U8, shave: int) -> float:
    w = np.array([65.481, 128.553, 24.966]) / 255.0
    ya = 16.0 + a[..., :3].astype(np.float64) @ w
    yb = 16.0 + b[..., :3].astype(np.float64) @ w
    d = (ya - yb)[shave:-shave, shave:-shave]
    return float(10.0 * np.log10(255.0**2 / np.mean(d**2)))


def _photo(name: str) -> U8:
    return np.asarray(getattr(skdata, name)(), dtype=np.uint8)


def _pil_resize(img: U8, w: int, h: int) -> U8:
    return np.asarray(Image.fromarray(img).resize((w, h), Image.Resampling.BICUBIC))


def _pair(name: str, scale: int, antialias: bool) -> tuple[U8, U8]:
    """(HR, LR): the photo cropped to a multiple of ``scale`` and its downscale, by PIL bicubic
    (antialiased) or by ``cv2.INTER_CUBIC`` (no antialiasing)."""
    hr = _photo(name)
    if hr.ndim == 2:
        hr = np.repeat(hr[..., None], 3, axis=2)
    h, w = (hr.shape[0] // scale) * scale, (hr.shape[1] // scale) * scale
    hr = np.ascontiguousarray(hr[:h, :w])
    if antialias:
        lr = _pil_resize(hr, w // scale, h // scale)
    else:
        lr = np.asarray(cv2.resize(hr, (w // scale, h // scale), interpolation=cv2.INTER_CUBIC))
    return hr, lr


def _gain(name: str, scale: int, antialias: bool, quality: str = "balanced") -> float:
    """PSNR-Y gain in dB of ``upscale_learned`` over PIL bicubic upscaling of the same input."""
    hr, lr = _pair(name, scale, antialias)
    h, w = hr.shape[:2]
    ours = upscale_learned(lr, scale, quality)  # type: ignore[arg-type]
    return _psnr_y(ours, hr, scale) - _psnr_y(_pil_resize(lr, w, h), hr, scale)


def _nearest_gains(scale: int, kernel: str, quality: str) -> list[float]:
    """PSNR-Y gain over bicubic on nearest-neighbour downscales (PIL or OpenCV) of coffee,
    astronaut and camera."""
    gains = []
    for name in ("coffee", "astronaut", "camera"):
        hr, _ = _pair(name, scale, antialias=True)
        h, w = hr.shape[:2]
        size = (w // scale, h // scale)
        if kernel == "pil":
            lr = np.asarray(Image.fromarray(hr).resize(size, Image.Resampling.NEAREST))
        else:
            lr = np.asarray(cv2.resize(hr, size, interpolation=cv2.INTER_NEAREST))
        ours = upscale_learned(np.asarray(lr, np.uint8), scale, quality)  # type: ignore[arg-type]
        bicubic = _pil_resize(np.asarray(lr, np.uint8), w, h)
        gains.append(_psnr_y(ours, hr, scale) - _psnr_y(bicubic, hr, scale))
    return gains


def test_models_ship_in_the_package_and_load_without_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    models = files("pixelmill.engines.upscale") / "models"
    names = {*learned.MODEL_FILES.values(), *learned.HIGH_FILES.values()}
    assert names == {
        "pixelmill-sr-x2.onnx",
        "pixelmill-sr-x4.onnx",
        "pixelmill-sr-x2-high.onnx",
        "pixelmill-sr-x4-high.onnx",
    }
    for name in [*sorted(names), "MODEL_CARD.md"]:
        assert (models / name).is_file(), name
    for name in names:
        assert 0 < len((models / name).read_bytes()) < 5 * 1024 * 1024
    # The context networks also ship folded (training/sr/fold.py): what the engine runs.
    for name in STEMS:
        for suffix in (CONTEXT_SUFFIX, PLAIN_SUFFIX):
            assert (models / (name + suffix)).is_file(), name + suffix

    def no_network(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the model tried to open a network connection")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    # Fresh sessions, so loading really happens under the patch.
    for quality in learned.QUALITIES:
        for scale in (2, 4):
            model = OnnxModel(learned.model_file(scale, quality))
            model.load()
            assert model.loaded
    for stem in STEMS:
        folded = FoldedNetwork(models, stem)
        folded.load()
        assert folded.context.loaded
    learned.load()
    for quality in learned.QUALITIES:
        out = upscale_learned(np.zeros((8, 8, 3), np.uint8), 2, quality)  # type: ignore[arg-type]
        assert out.shape == (16, 16, 3)


def test_model_info() -> None:
    for scale in (2, 4):
        info = model_info(scale)
        assert info["name"] == f"pixelmill-sr-x{scale}"
        assert 1_000 < info["params"] < 1_000_000
        assert 0 < info["file_bytes"] < 5 * 1024 * 1024
        assert info["macs_per_input_pixel"] > 0
    high = model_info(2, "high")
    assert high["name"] == "pixelmill-sr-x2-high"
    # A genuinely larger network, not the balanced one under another name. Both x2 networks
    # are mixtures of 3 experts folded into one network per image (3 kernels per weight, one
    # run), so the measure is what runs: channels, depth and MACs per pixel.
    balanced = model_info(2)
    assert balanced["experts"] == 3 and high["experts"] == 3
    assert balanced["gains_folded"] and high["gains_folded"]
    assert high["channels"] > balanced["channels"] and high["depth"] > balanced["depth"]
    assert high["macs_per_input_pixel"] > 4 * balanced["macs_per_input_pixel"]
    assert high["params"] > balanced["params"]
    # x4 too: high is a wider, deeper network (grown from balanced x4, issue 44), not a rename.
    high4, balanced4 = model_info(4, "high"), model_info(4)
    assert high4["name"] == "pixelmill-sr-x4-high" != balanced4["name"]
    assert high4["file"] == learned.HIGH_FILES[4] != learned.MODEL_FILES[4]
    assert high4["channels"] > balanced4["channels"] and high4["depth"] > balanced4["depth"]
    assert high4["macs_per_input_pixel"] > 4 * balanced4["macs_per_input_pixel"]
    assert len(model_info(8)["stages"]) == 2
    assert model_info(8, "high")["stages"][1]["name"] == "pixelmill-sr-x2-high"
    with pytest.raises(ValueError):
        model_info(3)
    with pytest.raises(ValueError):
        model_info(2, "ultra")


@pytest.mark.parametrize("scale", [2, 4, 8])
@pytest.mark.parametrize("shape", [(1, 1, 3), (2, 3, 4), (37, 53, 3), (41, 29, 4)])
def test_output_is_exactly_scale_times_input(scale: int, shape: tuple[int, int, int]) -> None:
    rng = np.random.default_rng(sum(shape) + scale)
    img = rng.integers(0, 256, shape, dtype=np.uint8)
    out = upscale_learned(img, scale)  # type: ignore[arg-type]
    assert out.dtype == np.uint8
    assert out.shape == (shape[0] * scale, shape[1] * scale, shape[2])


def test_rgba_keeps_alpha_and_colour() -> None:
    rgb = _photo("chelsea")[:120, :160]
    alpha = np.zeros(rgb.shape[:2], np.uint8)
    alpha[:, 80:] = 255
    out = upscale_learned(np.dstack([rgb, alpha]), 2)
    assert out.shape == (240, 320, 4)
    np.testing.assert_array_equal(out[..., :3], upscale_learned(rgb, 2))
    # Bicubic alpha: fully opaque/transparent away from the edge, a soft step across it.
    assert (out[:, :150, 3] == 0).all()
    assert (out[:, 170:, 3] == 255).all()
    flat = upscale_learned(np.dstack([rgb, np.full(rgb.shape[:2], 77, np.uint8)]), 4)
    assert (flat[..., 3] == 77).all()


@pytest.mark.parametrize("quality", ["balanced", "high"])
def test_tiled_inference_equals_one_tile(monkeypatch: pytest.MonkeyPatch, quality: str) -> None:
    img = _pil_resize(_photo("astronaut"), 700, 530)
    tiled = upscale_learned(img, 2, quality)  # type: ignore[arg-type]  # 512-px tiles: 4
    monkeypatch.setitem(learned.TILE, 2, 4096)
    whole = upscale_learned(img, 2, quality)  # type: ignore[arg-type]
    np.testing.assert_array_equal(tiled, whole)


@pytest.mark.parametrize(
    ("scale", "quality"), [(2, "balanced"), (2, "high"), (4, "balanced"), (4, "high")]
)
@pytest.mark.parametrize("kernel", ["pil-bicubic", "cv2-nearest"])
def test_folded_network_equals_the_exported_one(scale: int, quality: str, kernel: str) -> None:
    """The engine runs each context network folded (``folded.py``: the gains multiplied into
    the body weights of a per-image session); the result is the exported network's, which
    takes the statistics as a second input, to float rounding."""
    info = model_info(scale, quality)
    assert info["image_context"] is True and info["gains_folded"] is True
    hr = _photo("astronaut")[:300, :360]
    size = (hr.shape[1] // scale, hr.shape[0] // scale)
    if kernel == "pil-bicubic":
        lr = _pil_resize(hr, *size)
    else:
        lr = np.asarray(cv2.resize(hr, size, interpolation=cv2.INTER_NEAREST), np.uint8)
    exported = OnnxModel(learned.model_file(scale, quality))
    meta = learned.network_meta(exported)
    folded = learned._MODELS[learned.FILES[quality][scale]]
    assert isinstance(folded, FoldedNetwork)
    assert learned.network_meta(folded)["pixelmill_config"] == meta["pixelmill_config"]
    want = learned.run_network(lr, exported, meta).astype(np.int16)
    got = learned.run_network(lr, folded, meta).astype(np.int16)
    # Float rounding moves a few pixels by one level; measured: none by more.
    assert np.abs(got - want).max() <= 1
    assert (got != want).mean() < 1e-4  # measured: at most 8 values per million


def test_mixture_gives_clean_and_aliased_inputs_different_kernels() -> None:
    """Balanced x2 blends its 3 experts per image from the statistics (training/sr/model.py,
    MixSRNet): a clean downscale and a nearest-neighbour one of the same photo get visibly
    different kernels. The skip and tail layers carry no gains, so what differs there is the
    blend alone (measured: tail 15 %, skip 3 % of the weights' L1 norm)."""
    hr = _photo("astronaut")[:300, :360]
    clean = _pil_resize(hr, 180, 150)
    aliased = np.asarray(cv2.resize(hr, (180, 150), interpolation=cv2.INTER_NEAREST), np.uint8)
    model = learned._MODELS[learned.FILES["balanced"][2]]
    assert isinstance(model, FoldedNetwork)
    names = [o.name for o in model.context.session.get_outputs()]

    def kernels(img: npt.NDArray[np.uint8]) -> dict[str, npt.NDArray[np.float32]]:
        feeds = {model.context.input_names[0]: image_stats(learned._luma01(img))[None]}
        return dict(zip(names, model.context.run(feeds), strict=True))

    a, b = kernels(clean), kernels(aliased)
    for name, least in (("tail.weight", 0.05), ("skip.weight", 0.01)):
        change = np.abs(a[name] - b[name]).sum() / np.abs(a[name]).sum()
        assert change > least, (name, change)


@pytest.mark.parametrize("scale", [2, 4])
def test_high_mirror_ensemble_is_the_mean_of_both_passes(scale: int) -> None:
    img = _photo("chelsea")[:90, :110]
    info = model_info(scale, "high")
    assert info["mirror_ensemble"] is True and model_info(scale)["mirror_ensemble"] is False
    model = OnnxModel(learned.model_file(scale, "high"))
    meta = learned.network_meta(model)
    plain = learned.run_network(img, model, meta).astype(np.float64)
    mirrored = learned.run_network(np.ascontiguousarray(img[:, ::-1]), model, meta)[:, ::-1]
    both = upscale_learned(img, scale, "high").astype(np.float64)  # type: ignore[arg-type]
    # The ensemble averages the luma predictions before colour is put back and rounded.
    assert np.abs(both - (plain + mirrored) / 2).max() <= 1.0
    assert np.abs(both - plain).mean() > 0.05  # the second pass really ran


@pytest.mark.parametrize("antialias", [True, False])
def test_high_beats_balanced_at_x4(antialias: bool) -> None:
    """``high`` x4 is its own network (issue 44: balanced x4 grown to 48 channels x 10 layers
    and trained on, with the mirror pass), ahead of balanced on every one of three photos."""
    assert model_info(4, "high")["transforms"] == 2
    diffs = [
        _gain(name, 4, antialias, "high") - _gain(name, 4, antialias, "balanced")
        for name in ("coffee", "astronaut", "camera")
    ]
    assert min(diffs) > 0.0, f"high - balanced: {diffs}"
    assert sum(diffs) / len(diffs) >= MIN_HIGH_OVER_BALANCED_X4_DB, f"high - balanced: {diffs}"


def test_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        upscale_learned(np.zeros((4, 4), np.uint8), 2)
    with pytest.raises(ValueError):
        upscale_learned(np.zeros((4, 4, 3), np.float32), 2)
    with pytest.raises(ValueError):
        upscale_learned(np.zeros((4, 4, 3), np.uint8), 3)  # type: ignore[arg-type]


@pytest.mark.parametrize("scale", [2, 4])
def test_beats_bicubic_on_clean_bicubic_input(scale: int) -> None:
    gain = _gain("coffee", scale, antialias=True)
    assert gain >= MIN_GAIN_DB[scale], f"x{scale}: only {gain:+.2f} dB over bicubic"


@pytest.mark.parametrize("quality", ["balanced", "high"])
def test_not_below_bicubic_on_non_antialiased_x2_input(quality: str) -> None:
    gains = {n: _gain(n, 2, False, quality) for n in ("coffee", "astronaut", "camera")}
    assert sum(gains.values()) / len(gains) >= MIN_MEAN_GAIN_NOAA_X2_DB, gains
    assert min(gains.values()) >= MIN_PHOTO_GAIN_NOAA_X2_DB[quality], gains


@pytest.mark.parametrize("quality", ["balanced", "high"])
@pytest.mark.parametrize("kernel", ["pil", "cv2"])
def test_not_below_bicubic_on_nearest_neighbour_x2_input(quality: str, kernel: str) -> None:
    gains = _nearest_gains(2, kernel, quality)
    assert sum(gains) / len(gains) >= MIN_MEAN_GAIN_NEAREST_X2_DB[quality], gains


@pytest.mark.parametrize("quality", ["balanced", "high"])
@pytest.mark.parametrize("kernel", ["pil", "cv2"])
def test_not_below_bicubic_on_nearest_neighbour_x4_input(quality: str, kernel: str) -> None:
    gains = _nearest_gains(4, kernel, quality)
    assert sum(gains) / len(gains) >= MIN_MEAN_GAIN_NEAREST_X4_DB[(quality, kernel)], gains


@pytest.mark.parametrize("antialias", [True, False])
def test_high_beats_balanced_at_x2(antialias: bool) -> None:
    diffs = [
        _gain(name, 2, antialias, "high") - _gain(name, 2, antialias, "balanced")
        for name in ("coffee", "astronaut")
    ]
    mean = sum(diffs) / len(diffs)
    assert mean >= MIN_HIGH_OVER_BALANCED_DB, f"high - balanced: {diffs}"


def test_high_network_follows_the_image_statistics(monkeypatch: pytest.MonkeyPatch) -> None:
    """The high x2 network is conditioned on image-wide statistics (``context.py``): the same
    pixels come out differently when the statistics say the image is a nearest-neighbour
    downscale, and the statistics are computed once per image, not per tile."""
    info = model_info(2, "high")
    assert info["image_context"] is True
    hr = _photo("chelsea")
    h, w = hr.shape[0] // 2, hr.shape[1] // 2
    lr = _pil_resize(hr, w, h)
    aliased = np.asarray(cv2.resize(hr, (w, h), interpolation=cv2.INTER_NEAREST), np.uint8)
    model = OnnxModel(learned.model_file(2, "high"))
    meta = learned.network_meta(model)
    calls: list[tuple[int, int]] = []
    real = image_stats

    def counted(y: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        calls.append(y.shape)
        return real(y)

    monkeypatch.setattr(learned, "image_stats", counted)
    monkeypatch.setitem(learned.TILE, 2, 64)  # many tiles
    own = learned.run_network(lr, model, meta).astype(np.float64)
    assert calls == [(h, w)]
    nearest_stats = real(learned._luma01(aliased))
    monkeypatch.setattr(learned, "image_stats", lambda y: nearest_stats)
    told_nearest = learned.run_network(lr, model, meta).astype(np.float64)
    # Measured: 0.96 levels per channel on average.
    diff = float(np.abs(own - told_nearest).mean())
    assert diff > 0.3, diff
