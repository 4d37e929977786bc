"""pixelmill-sr: our own learned super-resolution (×2, ×4; ×8 = ×4 then ×2), run with onnxruntime.

Two quality levels: ``balanced`` runs the compact ×2 and ×4 networks, ``high`` larger ×2 and ×4
networks, each averaged with its prediction for the mirror image (``model_info`` says what
runs). All were trained on a mix of real-world degradations (bicubic with and without
antialiasing, area, bilinear, nearest, mild blur, noise, JPEG), so one network serves every kind
of downscaled upload without detecting which it got.

The networks (trained by ``training/sr/``, described in ``models/MODEL_CARD.md``) are small
residual CNNs on the luma channel: every convolution runs at the input resolution with *valid*
padding, a pixel shuffle makes the output, and a linear 5×5 skip initialised to bicubic carries
the image, so the network adds detail on top of (learned) bicubic. Chroma and alpha are upscaled
by bicubic interpolation.

Inference is tiled: the input is reflect-padded once by the network's margin (its receptive-field
radius) and cut into tiles whose halo equals that margin, so the tiled result is *exactly* the
untiled one while memory stays bounded by the tile size. The ONNX sessions load once per process
(under a lock, from the installed package, never from the network) with two intra-op threads.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.runtime.onnx import OnnxModel
from pixelmill.engines.upscale.context import image_stats
from pixelmill.engines.upscale.folded import CONTEXT_SUFFIX, FoldedNetwork

Scale = Literal[2, 4, 8]
Quality = Literal["balanced", "high"]
SCALES: tuple[int, ...] = (2, 4, 8)
QUALITIES: tuple[str, ...] = ("balanced", "high")
# The network file per quality level and native scale.
MODEL_FILES: dict[int, str] = {2: "pixelmill-sr-x2.onnx", 4: "pixelmill-sr-x4.onnx"}
HIGH_FILES: dict[int, str] = {2: "pixelmill-sr-x2-high.onnx", 4: "pixelmill-sr-x4-high.onnx"}
FILES: dict[str, dict[int, str]] = {"balanced": MODEL_FILES, "high": HIGH_FILES}
# How many of the eight rotations and mirrorings of the input each quality level averages the
# network's predictions over (a self-ensemble, ``run_ensemble``): ``high`` the image and its
# mirror image (×4: +0.03 dB on clean held-out input, +0.03 on the mean of 11 degradations;
# the balanced ×4 network over all eight measured +0.08 / +0.12 dB for eight times the time,
# issue 44, models/MODEL_CARD.md).
TRANSFORMS: dict[str, dict[int, int]] = {"balanced": {2: 1, 4: 1}, "high": {2: 2, 4: 2}}
# Low-resolution tile side (without the halo) per network scale: about 0.25 MP of input per
# tile for ×2 and 0.06 MP for ×4 keeps the largest buffers at a few tens of MB.
TILE: dict[int, int] = {2: 512, 4: 256}
# BT.601 studio-range luma weights (Y = 16 + w · RGB / 255): adding d to R, G and B adds
# d · 219 / 255 to Y, which is how the predicted luma is put back into the bicubic colour image.
_Y_WEIGHTS = np.array([65.481, 128.553, 24.966], dtype=np.float32) / 255.0
_DELTA_GAIN = 255.0 * 255.0 / 219.0  # luma in 0..1 units -> RGB 0..255 units


def _file_name(scale: int, quality: str) -> str:
    if quality not in FILES:
        raise ValueError(f"quality must be one of {QUALITIES}, got {quality!r}")
    if scale not in FILES[quality]:
        raise ValueError(f"scale must be one of {SCALES}, got {scale}")
    return FILES[quality][scale]


def model_file(scale: int, quality: str = "balanced") -> Traversable:
    """The packaged ONNX file of the network for ``scale`` (2 or 4) at ``quality``."""
    return files("pixelmill.engines.upscale") / "models" / _file_name(scale, quality)


Network = OnnxModel | FoldedNetwork
"""An exported network as it runs: one ONNX session, or (a context network that
``training/sr/fold.py`` folded) its context and plain graphs (``folded.py``)."""


def _network(name: str) -> Network:
    folder = files("pixelmill.engines.upscale") / "models"
    stem = name.removesuffix(".onnx")
    if (folder / (stem + CONTEXT_SUFFIX)).is_file():
        return FoldedNetwork(folder, stem)
    return OnnxModel(folder / name)


_MODELS: dict[str, Network] = {
    name: _network(name) for name in sorted({*MODEL_FILES.values(), *HIGH_FILES.values()})
}


def load() -> None:
    """Create every ONNX session now (idempotent, thread-safe)."""
    for model in _MODELS.values():
        model.load()


def network_meta(model: Network) -> dict[str, str]:
    """The ``pixelmill_*`` metadata an exported network carries (config, step, counts); folded
    graphs carry their source's."""
    session = model.context.session if isinstance(model, FoldedNetwork) else model.session
    meta = session.get_modelmeta().custom_metadata_map
    return {str(k): str(v) for k, v in meta.items()}


@cache
def _meta(name: str) -> dict[str, str]:
    return network_meta(_MODELS[name])


def model_info(scale: int, quality: str = "balanced") -> dict[str, Any]:
    """Facts about the network(s) used for ``scale`` (2, 4 or 8) at ``quality``, for
    ``details``."""
    if scale == 8:
        first, second = model_info(4, quality), model_info(2, quality)
        return {"name": f"{first['name']} then {second['name']}", "stages": [first, second]}
    name = _file_name(scale, quality)
    meta = _meta(name)
    cfg = json.loads(meta["pixelmill_config"])
    return {
        "name": meta.get("pixelmill_name", name.removesuffix(".onnx")),
        "file": name,
        "file_bytes": len(model_file(scale, quality).read_bytes()),
        "params": int(meta["pixelmill_params"]),
        "macs_per_input_pixel": int(meta["pixelmill_macs_per_input_pixel"]),
        "channels": int(cfg["channels"]),
        "depth": int(cfg["depth"]),
        "margin": int(cfg["margin"]),
        "image_context": bool(cfg.get("context", 0)),
        # A mixture network (training/sr/model.py, MixSRNet): every convolution a blend of
        # this many kernels, set per image from its statistics and folded like the gains.
        "experts": int(cfg.get("experts", 1)),
        "gains_folded": isinstance(_MODELS[name], FoldedNetwork),
        "mirror_ensemble": TRANSFORMS[quality][scale] > 1,
        "transforms": TRANSFORMS[quality][scale],
    }


def _luma01(rgb: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """BT.601 studio-range luma of uint8 RGB(A) as float32 in 0..1 units (Y / 255)."""
    r, g, b = (rgb[..., i].astype(np.float32) for i in range(3))
    w = _Y_WEIGHTS / 255.0
    y = cv2.scaleAdd(r, float(w[0]), cv2.scaleAdd(g, float(w[1]), b * float(w[2])))
    return np.asarray(y + np.float32(16.0 / 255.0), dtype=np.float32)


def _dihedral(y: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.float32]:
    """Transform ``k`` of the eight rotations and mirrorings of the square (0: identity, 1:
    left-right mirror, 2-7: rotations by 90, 180, 270 degrees with and without the mirror)."""
    out = y[:, ::-1] if k % 2 else y
    return np.rot90(out, k // 2)


def _undo(y: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.float32]:
    """The inverse of :func:`_dihedral` ``k``."""
    out = np.rot90(y, -(k // 2))
    return out[:, ::-1] if k % 2 else out


@dataclass(frozen=True)
class Pass:
    """One network of an ensemble as it runs: ``transforms`` of the eight rotations and
    mirrorings (1: the image as it is, 2: and its mirror image, 8: all; the predictions are
    transformed back and averaged), weighted by ``weight`` in the ensemble's mean."""

    model: Network
    meta: dict[str, str]
    transforms: int = 1
    weight: float = 1.0


def run_network(
    img: npt.NDArray[np.uint8], model: Network, meta: dict[str, str], mirror: bool = False
) -> npt.NDArray[np.uint8]:
    """One pass of an exported pixelmill-sr network (``meta`` from :func:`network_meta`) over
    an RGB or RGBA uint8 image, tile by tile. With ``mirror`` the network also runs on each
    tile mirrored left-right and the two luma predictions are averaged (a self-ensemble: twice
    the time; the tile halo is symmetric, so tiling stays exact). Public so that benchmarks can
    run other exports (e.g. earlier weights) through exactly the same pipeline."""
    return run_ensemble(img, [Pass(model, meta, 2 if mirror else 1)])


def run_ensemble(img: npt.NDArray[np.uint8], passes: list[Pass]) -> npt.NDArray[np.uint8]:
    """The weighted mean of the luma predictions of ``passes`` (networks of one scale, each
    over its own rotations and mirrorings) over an RGB or RGBA uint8 image, tile by tile; colour
    and alpha as :func:`run_network` puts them back."""
    cfgs = [json.loads(p.meta["pixelmill_config"]) for p in passes]
    scales = {int(cfg["scale"]) for cfg in cfgs}
    if len(scales) != 1:
        raise ValueError(f"an ensemble's networks must share one scale, got {sorted(scales)}")
    scale = scales.pop()
    margins = [int(cfg["margin"]) for cfg in cfgs]
    tile = TILE[scale]
    h, w, c = img.shape
    # Bicubic colour needs 2 LR pixels of context; the networks need their margins. Pad once
    # (reflect), by the largest.
    pad = max(*margins, 4)
    padded = np.pad(img, ((pad, pad), (pad, pad), (0, 0)), mode="reflect")
    y_padded = _luma01(padded)
    # A context network also takes the whole image's statistics (``context.py``): the same
    # numbers for every tile, so tiling stays exact. Rotated or mirrored, the image has its own
    # (horizontal and vertical differences swap), so each transform gets those of the whole
    # transformed image. Folded, they become the weights of a session for this image
    # (``folded.py``); as exported, a second input.
    y_image = y_padded[pad : pad + h, pad : pad + w]
    runs: list[list[Callable[[npt.NDArray[np.float32]], npt.NDArray[np.float32]]]] = []
    for p, cfg in zip(passes, cfgs, strict=True):
        runs.append(
            [
                _runner(p.model, image_stats(_dihedral(y_image, k)) if cfg.get("context") else None)
                for k in range(p.transforms)
            ]
        )
    total = float(sum(p.weight * p.transforms for p in passes))

    out = np.empty((h * scale, w * scale, c), dtype=np.uint8)
    for y0 in range(0, h, tile):
        th = min(tile, h - y0)
        for x0 in range(0, w, tile):
            tw = min(tile, w - x0)
            # Tile with its halo, in padded coordinates.
            src = padded[y0 : y0 + th + 2 * pad, x0 : x0 + tw + 2 * pad]
            y_src = y_padded[y0 : y0 + th + 2 * pad, x0 : x0 + tw + 2 * pad]
            y_sr: npt.NDArray[np.float32] | None = None
            for p, m, run in zip(passes, margins, runs, strict=True):
                d = pad - m
                y_lr = y_src[d : d + th + 2 * m, d : d + tw + 2 * m]
                for k, run_k in enumerate(run):
                    x = np.ascontiguousarray(_dihedral(y_lr, k)[None, None])
                    pred = _undo(run_k(x)[0, 0], k) * np.float32(p.weight)
                    y_sr = pred if y_sr is None else y_sr + pred
            assert y_sr is not None
            if total != 1.0:
                y_sr = y_sr * np.float32(1.0 / total)
            # Bicubic colour for the same tile, and the bicubic luma it carries (luma is linear:
            # the bicubic upscale of the LR luma). The colour is resized as uint8, which OpenCV
            # does about three times faster than float; its rounding moves the result by at most
            # one level, on about one pixel in a million (measured on coffee at x2).
            size = (src.shape[1] * scale, src.shape[0] * scale)
            rows = slice(pad * scale, (pad + th) * scale)
            cols = slice(pad * scale, (pad + tw) * scale)
            rgb = np.ascontiguousarray(src[..., :3])
            up = cv2.resize(rgb, size, interpolation=cv2.INTER_CUBIC)[rows, cols]
            y_up = cv2.resize(y_src, size, interpolation=cv2.INTER_CUBIC)[rows, cols]
            # Replace the bicubic luma by the network's: add the same delta to R, G and B.
            delta = cv2.addWeighted(
                np.ascontiguousarray(np.clip(y_sr, 0.0, 1.0)), _DELTA_GAIN, y_up, -_DELTA_GAIN, 0.0
            )
            dst = out[y0 * scale : (y0 + th) * scale, x0 * scale : (x0 + tw) * scale]
            dst[..., :3] = cv2.add(up, cv2.merge([delta, delta, delta]), dtype=cv2.CV_8U)
            if c == 4:
                alpha = np.ascontiguousarray(src[..., 3])
                dst[..., 3] = cv2.resize(alpha, size, interpolation=cv2.INTER_CUBIC)[rows, cols]
    return out


def _runner(
    model: Network, stats: npt.NDArray[np.float32] | None
) -> Callable[[npt.NDArray[np.float32]], npt.NDArray[np.float32]]:
    """``(1, 1, h, w)`` LR luma -> HR luma for one image: a folded network bound to the image's
    statistics, or an ONNX session fed them (or nothing, for a network without context)."""
    if isinstance(model, FoldedNetwork):
        assert stats is not None, "a folded network is a context network"
        return model.bind(stats).run
    feeds = {} if stats is None else {"stats": stats[None]}
    image_input = model.input_names[0]
    session_run = model.run

    def run(y: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        out: npt.NDArray[np.float32] = session_run({image_input: y, **feeds})[0]
        return out

    return run


def _upscale_once(img: npt.NDArray[np.uint8], scale: int, quality: str) -> npt.NDArray[np.uint8]:
    name = _file_name(scale, quality)
    return run_ensemble(img, [Pass(_MODELS[name], _meta(name), TRANSFORMS[quality][scale])])


def upscale_learned(
    rgb_or_rgba: npt.NDArray[np.uint8], scale: Scale, quality: Quality = "balanced"
) -> npt.NDArray[np.uint8]:
    """Upscale an RGB ``(H, W, 3)`` or RGBA ``(H, W, 4)`` uint8 image by ``scale`` (2, 4 or 8)
    with pixelmill-sr at ``quality`` ("balanced": the compact networks, "high": the larger ×2
    and ×4 networks, each with its mirror pass); the result is exactly ``(H * scale, W * scale, C)``
    uint8. ×8 runs the ×4 network, then the ×2 network. Alpha is upscaled by bicubic
    interpolation."""
    img = np.asarray(rgb_or_rgba)
    if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] not in (3, 4):
        raise ValueError(f"expected an (H, W, 3|4) uint8 image, got {img.dtype} {img.shape}")
    if img.shape[0] < 1 or img.shape[1] < 1:
        raise ValueError("empty image")
    if quality not in FILES:
        raise ValueError(f"quality must be one of {QUALITIES}, got {quality!r}")
    if scale == 8:
        return _upscale_once(_upscale_once(img, 4, quality), 2, quality)
    if scale not in MODEL_FILES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale}")
    return _upscale_once(img, scale, quality)
