"""The eight looks of the style-transfer engine, each a short classical recipe.

There is no neural style transfer offline (no fast-neural-style ONNX ships in a wheel), so each
style is built from OpenCV's non-photorealistic rendering filters (``stylization``,
``pencilSketch``, ``xphoto.oilPainting``, edge-preserving smoothing) and colour grading in
CIELAB. Spatial parameters are given for a 1000-pixel image and scaled with the image, so a
style looks the same at any size.

Every function takes and returns RGB ``uint8`` and is deterministic (the film grain and paper
texture use a fixed seed).
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.colour import from_lab, to_lab

FloatImage = npt.NDArray[np.float32]
StyleFilter = Callable[[ImageArray], ImageArray]


def _scale(rgb: ImageArray) -> float:
    """Size of the image relative to the 1000 px the parameters were chosen at."""
    return float(max(rgb.shape[:2])) / 1000.0


def _odd(n: float) -> int:
    return max(3, round(n) | 1)


def _smoothstep(x: FloatImage, lo: float, hi: float) -> FloatImage:
    t = np.clip((x - lo) / (hi - lo), 0.0, 1.0)
    return np.asarray(t * t * (3.0 - 2.0 * t), dtype=np.float32)


def _vignette(shape: tuple[int, int], strength: float) -> FloatImage:
    """Multiplicative vignette: 1 in the centre, ``1 - strength`` in the corners."""
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    r = np.hypot((xx - w / 2) / (w / 2), (yy - h / 2) / (h / 2)) / np.sqrt(2.0)
    return np.asarray(1.0 - strength * _smoothstep(r, 0.35, 1.0), dtype=np.float32)


def _grain(shape: tuple[int, int], sigma: float, blur: float) -> FloatImage:
    """Deterministic film grain / paper texture: seeded Gaussian noise, slightly blurred."""
    rng = np.random.default_rng(20020101)
    noise = rng.normal(0.0, 1.0, shape).astype(np.float32)
    if blur > 0:
        noise = np.asarray(cv2.GaussianBlur(noise, (0, 0), blur), dtype=np.float32)
        noise /= max(float(noise.std()), 1e-6)
    return noise * sigma


def _edges(rgb: ImageArray, block: float, c: float, thickness: int) -> npt.NDArray[np.bool_]:
    """Line-art mask from an adaptive threshold of the median-blurred luminance (dark lines
    where the image is locally darker than its neighbourhood)."""
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    grey = cv2.medianBlur(grey, 5)
    lines = cv2.adaptiveThreshold(
        grey, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, _odd(block), c
    )
    mask = lines == 0
    if thickness > 1:
        mask = cv2.dilate(mask.astype(np.uint8), np.ones((thickness, thickness), np.uint8)) > 0
    return np.asarray(mask, dtype=np.bool_)


def cinematic(rgb: ImageArray) -> ImageArray:
    """Teal-and-orange grade: an S-curve on lightness, shadows pushed to teal and highlights
    to orange (the blockbuster split tone), a slight vignette."""
    lab = to_lab(rgb)
    L = lab[..., 0] / 100.0
    curved = 1.0 / (1.0 + np.exp(-6.0 * (L - 0.5)))
    lo, hi = 1.0 / (1.0 + np.exp(3.0)), 1.0 / (1.0 + np.exp(-3.0))
    L = (curved - lo) / (hi - lo)
    shadows = (1.0 - _smoothstep(L, 0.15, 0.6))[..., None]
    lights = _smoothstep(L, 0.45, 0.9)[..., None]
    lab[..., 1:] *= 0.85
    lab[..., 1:] += shadows * np.array([-14.0, -20.0], np.float32)
    lab[..., 1:] += lights * np.array([8.0, 18.0], np.float32)
    lab[..., 0] = np.clip(L, 0.0, 1.0) * 100.0 * _vignette(L.shape, 0.3)
    return from_lab(lab)


def anime(rgb: ImageArray) -> ImageArray:
    """Cel-shaded cartoon: edge-preserving flattening, lightness quantised into 5 soft bands,
    boosted chroma, and thin dark ink lines."""
    s = _scale(rgb)
    flat = cv2.edgePreservingFilter(rgb, flags=cv2.RECURS_FILTER, sigma_s=60 * s, sigma_r=0.45)
    flat = cv2.bilateralFilter(flat, d=0, sigmaColor=30, sigmaSpace=4 * s + 1)
    lab = to_lab(np.asarray(flat, dtype=np.uint8))
    L = lab[..., 0]
    bands = 5
    step = 100.0 / bands
    # Soft-edged bands: a pure floor() would alias along gradients.
    q = np.floor(L / step)
    frac = L / step - q
    L = (q + _smoothstep(frac, 0.8, 1.0)) * step + step * 0.35
    lab[..., 0] = np.clip(L, 0.0, 100.0)
    lab[..., 1:] *= 1.35
    out = from_lab(lab)
    lines = _edges(rgb, block=9 * s + 5, c=6.0, thickness=max(1, round(1.5 * s)))
    out[lines] = (out[lines].astype(np.float32) * 0.2).astype(np.uint8)
    return out


def oil_painting(rgb: ImageArray) -> ImageArray:
    """OpenCV's oil-painting filter (dominant colour of a brush neighbourhood), a little more
    chroma, and an emboss of the brush texture so strokes catch the light."""
    s = _scale(rgb)
    paint = cv2.xphoto.oilPainting(rgb, max(3, round(7 * s)), 1, cv2.COLOR_RGB2Lab)
    lab = to_lab(np.asarray(paint, dtype=np.uint8))
    lab[..., 1:] *= 1.15
    emboss = cv2.filter2D(
        lab[..., 0], -1, np.array([[-1, -1, 0], [-1, 0, 1], [0, 1, 1]], np.float32)
    )
    lab[..., 0] = np.clip(lab[..., 0] + 0.25 * emboss, 0.0, 100.0)
    return from_lab(lab)


def watercolor(rgb: ImageArray) -> ImageArray:
    """Washes of flat colour (``cv2.stylization``), lightened and desaturated like diluted
    pigment, darker at region borders where pigment pools, on a paper texture."""
    s = _scale(rgb)
    wash = cv2.stylization(rgb, sigma_s=60 * s, sigma_r=0.5)
    lab = to_lab(np.asarray(wash, dtype=np.uint8))
    L = lab[..., 0]
    # Pigment pooling: a difference of Gaussians darkens just inside edges.
    dog = cv2.GaussianBlur(L, (0, 0), 1.0 * s + 0.5) - cv2.GaussianBlur(L, (0, 0), 4.0 * s + 1)
    L = L + np.minimum(dog, 0.0) * 1.2
    L = 100.0 - (100.0 - L) * 0.8  # diluted: everything lighter
    L += _grain(L.shape, 2.0, 1.2 * s + 0.5)
    lab[..., 0] = np.clip(L, 0.0, 100.0)
    lab[..., 1:] *= 0.8
    return from_lab(lab)


def sketch(rgb: ImageArray) -> ImageArray:
    """Graphite pencil sketch (``cv2.pencilSketch``, greyscale output)."""
    s = _scale(rgb)
    grey, _ = cv2.pencilSketch(rgb, sigma_s=60 * s, sigma_r=0.07, shade_factor=0.04)
    return np.ascontiguousarray(np.dstack([grey] * 3), dtype=np.uint8)


def pop_art(rgb: ImageArray) -> ImageArray:
    """Warhol/Lichtenstein pop art: saturated posterised colour (3 levels per channel), bold
    black outlines, and a halftone dot screen whose dots grow in the darker tones."""
    s = _scale(rgb)
    smooth = cv2.bilateralFilter(rgb, d=0, sigmaColor=40, sigmaSpace=3 * s + 1)
    lab = to_lab(np.asarray(smooth, dtype=np.uint8))
    lab[..., 1:] *= 1.8
    vivid = from_lab(lab).astype(np.float32)
    poster = np.round(vivid / 127.5) * 127.5
    poster = np.clip(poster, 0, 255)
    h, w = rgb.shape[:2]
    cell = max(4.0, 9.0 * s)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    # Distance to the centre of the cell on a 45° screen, as in print halftones.
    u = (xx + yy) / np.sqrt(2.0)
    v = (xx - yy) / np.sqrt(2.0)
    du = (u % cell) - cell / 2.0
    dv = (v % cell) - cell / 2.0
    dist = np.hypot(du, dv) / (cell / 2.0)
    darkness = 1.0 - lab[..., 0] / 100.0
    radius = np.sqrt(np.clip(darkness * 1.1 - 0.1, 0.0, 1.0)) * 0.95
    dots = (dist < radius)[..., None]
    out = np.where(dots, poster * 0.45, poster)
    lines = _edges(rgb, block=11 * s + 5, c=8.0, thickness=max(2, round(2.5 * s)))
    out[lines] = 0.0
    return np.asarray(np.clip(out, 0, 255), dtype=np.uint8)


def cyberpunk(rgb: ImageArray) -> ImageArray:
    """Neon night grade: shadows pushed to deep blue-violet, highlights to magenta-cyan, strong
    contrast and chroma, a bloom around bright areas and a slight chromatic aberration."""
    s = _scale(rgb)
    lab = to_lab(rgb)
    L = lab[..., 0] / 100.0
    L = np.clip((L - 0.5) * 1.25 + 0.45, 0.0, 1.0)
    shadows = (1.0 - _smoothstep(L, 0.1, 0.55))[..., None]
    lights = _smoothstep(L, 0.4, 0.9)[..., None]
    # Split the lights by their own hue: warm ones go magenta, cool ones cyan.
    warm = (lab[..., 1:2] + lab[..., 2:3]) > 0
    light_tint = np.where(
        warm, np.array([38.0, -18.0], np.float32), np.array([-22.0, -28.0], np.float32)
    )
    lab[..., 1:] *= 1.3
    lab[..., 1:] += shadows * np.array([18.0, -38.0], np.float32) + lights * light_tint
    lab[..., 0] = L * 100.0
    graded = from_lab(lab).astype(np.float32)
    bright = np.clip(graded - 160.0, 0.0, 255.0)
    bloom = cv2.GaussianBlur(bright, (0, 0), 12.0 * s + 2)
    out = 255.0 - (255.0 - graded) * (255.0 - bloom * 1.5) / 255.0  # screen blend
    shift = max(1, round(3 * s))
    out[..., 0] = np.roll(out[..., 0], shift, axis=1)
    out[..., 2] = np.roll(out[..., 2], -shift, axis=1)
    return np.asarray(np.clip(out + 0.5, 0, 255), dtype=np.uint8)


def vintage(rgb: ImageArray) -> ImageArray:
    """Faded 1970s print: lifted blacks and dimmed whites, low saturation with a warm yellow
    cast, a vignette and fine film grain."""
    s = _scale(rgb)
    lab = to_lab(rgb)
    L = lab[..., 0]
    L = 14.0 + L * 0.78
    L = L * _vignette(L.shape, 0.35) + _grain(L.shape, 2.5, 0.6 * s)
    lab[..., 0] = np.clip(L, 0.0, 100.0)
    lab[..., 1] = lab[..., 1] * 0.55 + 4.0
    lab[..., 2] = lab[..., 2] * 0.55 + 16.0
    return from_lab(lab)


STYLES: dict[str, StyleFilter] = {
    "cinematic": cinematic,
    "anime": anime,
    "oil_painting": oil_painting,
    "watercolor": watercolor,
    "sketch": sketch,
    "pop_art": pop_art,
    "cyberpunk": cyberpunk,
    "vintage": vintage,
}
"""Style name → filter, in the order the API lists them."""

DESCRIPTIONS: dict[str, str] = {
    "cinematic": "teal-and-orange colour grade with an S-curve and vignette",
    "anime": "edge-preserving flattening, 5-band cel shading, boosted chroma, ink lines",
    "oil_painting": "cv2.xphoto.oilPainting brush filter with embossed strokes",
    "watercolor": "cv2.stylization washes, pigment pooling at edges, paper texture",
    "sketch": "cv2.pencilSketch graphite drawing (greyscale)",
    "pop_art": "posterised saturated colour, bold outlines, 45° halftone dot screen",
    "cyberpunk": "neon blue-violet/magenta-cyan grade, bloom, chromatic aberration",
    "vintage": "faded print: lifted blacks, warm low-saturation cast, vignette, grain",
}
