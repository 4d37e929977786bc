"""Pixel operations behind the edit steps: tonal adjustments, black and white, sepia, sharpen,
vignette, shading-preserving recolouring and portrait-mode background blur.

The per-pixel functions take and return float32 sRGB images ``(H, W, 3)`` in 0..1 and are
pure. They are written so the engine can run them on horizontal strips of a large image: any
statistic of the whole image (mean brightness, the object's dominant colour) is an argument,
and position-dependent effects (vignette) take the strip's place in the image. ``amount`` is
the signed step amount (+1 = the nominal effect, -1 the opposite); each nominal effect is
tuned to be clearly visible but not extreme.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.palette import Color
from pixelmill.engines.runtime.textures import Gray, Rgb

_LUMA = np.asarray((0.2126, 0.7152, 0.0722), dtype=np.float32)


def luma(rgb: Rgb) -> Gray:
    """Rec. 709 luma of an sRGB image (perceptual brightness, not linear light)."""
    out: Gray = rgb @ _LUMA
    return out


def _clip(rgb: Rgb) -> Rgb:
    return np.clip(rgb, 0.0, 1.0).astype(np.float32, copy=False)


def warmth(rgb: Rgb, amount: float) -> Rgb:
    """White-balance shift: warmer (more red/yellow, less blue) for amount > 0."""
    gains = np.asarray(
        (1.0 + 0.09 * amount, 1.0 + 0.02 * amount, 1.0 - 0.11 * amount), dtype=np.float32
    )
    return _clip(rgb * gains)


def brightness(rgb: Rgb, amount: float) -> Rgb:
    """Brighten (amount > 0) or darken with a gamma curve, which moves the mid-tones and keeps
    pure black and white where they are (no clipping of highlights)."""
    gamma = 2.0 ** (-0.55 * amount)
    return _clip(np.power(np.clip(rgb, 0.0, 1.0), np.float32(gamma)))


def contrast(rgb: Rgb, amount: float, pivot: float) -> Rgb:
    """Stretch (amount > 0) or compress tones around ``pivot`` (the whole image's mean luma,
    so that every strip of a large image uses the same curve)."""
    k = np.float32(max(0.1, 1.0 + 0.3 * amount))
    p = np.float32(pivot)
    return _clip((rgb - p) * k + p)


def saturation(rgb: Rgb, amount: float) -> Rgb:
    """More (amount > 0) or less colour: push each pixel away from / towards its own grey."""
    y = luma(rgb)[..., None]
    k = np.float32(max(0.0, 1.0 + 0.45 * amount))
    return _clip((rgb - y) * k + y)


def monochrome(rgb: Rgb) -> Rgb:
    """Black and white: every channel set to the pixel's luma."""
    y = luma(rgb)
    return np.repeat(y[..., None], 3, axis=2).astype(np.float32)


_SEPIA = np.asarray(
    [[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]], dtype=np.float32
)


def sepia(rgb: Rgb) -> Rgb:
    """The classic sepia matrix, rescaled so white stays (nearly) white instead of clipping."""
    toned = rgb @ _SEPIA.T
    return _clip(toned * np.float32(1.0 / 1.351))


def sharpen_sigma(h: int, w: int) -> float:
    """The unsharp-mask radius for an ``h`` × ``w`` image (grows with the image)."""
    return max(0.8, max(h, w) / 900.0)


def sharpen_reach(sigma: float, amount: float) -> int:
    """How many pixels of context :func:`sharpen` needs around a strip."""
    return math.ceil(4.0 * sigma * max(1.0, 1.8 * abs(amount))) + 1


def sharpen(rgb: Rgb, amount: float, sigma: float) -> Rgb:
    """Unsharp mask for amount > 0; a Gaussian soften (radius ∝ -amount) for amount < 0."""
    if amount >= 0:
        blurred = cv2.GaussianBlur(rgb, (0, 0), sigma)
        return _clip(rgb + np.float32(0.9 * amount) * (rgb - blurred))
    return np.asarray(cv2.GaussianBlur(rgb, (0, 0), sigma * 1.8 * -amount), dtype=np.float32)


def vignette(rgb: Rgb, amount: float, top: int = 0, full_height: int | None = None) -> Rgb:
    """Darken the corners (amount > 0) or lighten them (< 0) with a smooth radial fall-off.
    ``rgb`` may be a strip starting at row ``top`` of an image ``full_height`` tall."""
    h, w = rgb.shape[:2]
    fh = h if full_height is None else full_height
    rows = np.arange(top, top + h, dtype=np.float32)
    y = (rows / max(1, fh - 1) - 0.5)[:, None] * 2.0
    x = (np.arange(w, dtype=np.float32) / max(1, w - 1) - 0.5)[None, :] * 2.0
    r2 = (x * x + y * y) * 0.5  # 0 at the centre, 1 in the corners
    gain = 1.0 - 0.45 * amount * r2**1.5
    return _clip(rgb * gain[..., None])


def _to_lab(rgb: Rgb) -> Rgb:
    return np.asarray(cv2.cvtColor(rgb, cv2.COLOR_RGB2Lab), dtype=np.float32)


def _from_lab(lab: Rgb) -> Rgb:
    return _clip(np.asarray(cv2.cvtColor(lab, cv2.COLOR_Lab2RGB), dtype=np.float32))


def mean_lightness(rgb: Rgb, weight: Gray | None = None) -> float:
    """Mean CIE L* (0..100) of ``rgb``, over the pixels where ``weight`` > 0.5 if given."""
    L = _to_lab(rgb)[..., 0]
    if weight is None:
        return float(L.mean())
    inside = weight > 0.5
    return float(L[inside].mean()) if inside.any() else float(L.mean())


def recolor(rgb: Rgb, color: Color, mean_l: float) -> Rgb:
    """Repaint ``rgb`` in ``color`` keeping its shading (the caller blends the result in
    through the object's mask).

    Works in CIE Lab: lightness keeps its local variation (shading, highlights, texture) but
    its average (``mean_l``, measured on the object) moves most of the way to the target's
    lightness, so a white car can become a dark red one; the chroma is set to the target's
    hue, reduced in deep shadows and bright highlights, where real paint loses colour too."""
    lab = _to_lab(rgb)
    target = _to_lab(np.asarray([[color]], dtype=np.float32))[0, 0]
    achromatic = math.hypot(float(target[1]), float(target[2])) < 8.0
    pull = 0.85 if achromatic else 0.6
    new_l = lab[..., 0] + pull * (float(target[0]) - mean_l)
    # Chroma fades towards L = 0 and L = 100 (shadows and speculars stay neutral).
    headroom = np.clip(np.minimum(new_l, 100.0 - new_l) / 25.0, 0.0, 1.0)
    out = np.empty_like(lab)
    out[..., 0] = np.clip(new_l, 0.0, 100.0)
    out[..., 1] = float(target[1]) * headroom
    out[..., 2] = float(target[2]) * headroom
    return _from_lab(out)


@dataclass(frozen=True)
class DominantColour:
    """The main object's dominant colour: a hue angle (degrees in the a*b* plane) and the
    median chroma of the pixels of that hue, or ``hue=None`` for a neutral object."""

    hue: float | None
    chroma: float


def find_dominant_colour(rgb: Rgb, alpha: Gray) -> DominantColour:
    """Inside the object, pixels are either neutral (chroma < 12) or coloured; the coloured
    ones are grouped by hue around the peak of their hue histogram. Whichever group is larger
    is the dominant colour; the coloured group wins ties up to 2:1, since people mostly ask to
    recolour coloured things. Pass a subsample for speed: only proportions matter."""
    lab = _to_lab(rgb)
    a, b = lab[..., 1], lab[..., 2]
    chroma = np.sqrt(a * a + b * b)
    inside = alpha > 0.5
    coloured = inside & (chroma >= 12.0)
    neutral_mass = float(np.count_nonzero(inside & (chroma < 12.0)))
    if not coloured.any():
        return DominantColour(None, 0.0)
    hue = np.degrees(np.arctan2(b[coloured], a[coloured])) % 360.0
    hist, _ = np.histogram(hue, bins=36, range=(0.0, 360.0))
    circular = np.concatenate([hist[-2:], hist, hist[:2]]).astype(np.float32)
    smooth = np.convolve(circular, np.ones(5, np.float32), mode="same")[2:-2]
    peak = (int(np.argmax(smooth)) + 0.5) * 10.0
    group = np.abs((hue - peak + 180.0) % 360.0 - 180.0) <= 30.0
    if 2.0 * float(np.count_nonzero(group)) < neutral_mass:
        return DominantColour(None, 0.0)
    return DominantColour(peak, float(np.median(chroma[coloured][group])))


def dominant_colour_weight(rgb: Rgb, alpha: Gray, dominant: DominantColour) -> Gray:
    """How much each pixel belongs to the object's ``dominant`` colour (0..1, times alpha), so
    recolouring "the car" changes its paint and leaves its windows, tyres and chrome alone. A
    coloured pixel belongs when its hue is within ~25° of the dominant hue and its chroma is at
    least ~half the group's median (shaded paint keeps its hue but loses some chroma); for a
    neutral object every low-chroma pixel belongs. Memberships fade over a margin, and are
    blurred by 1 px, so no hard seams appear (strips need 3 rows of context)."""
    lab = _to_lab(rgb)
    a, b = lab[..., 1], lab[..., 2]
    chroma = np.sqrt(a * a + b * b)
    if dominant.hue is None:
        weight = np.clip((20.0 - chroma) / 8.0, 0.0, 1.0)
    else:
        hue = np.degrees(np.arctan2(b, a)) % 360.0
        angle = np.abs((hue - dominant.hue + 180.0) % 360.0 - 180.0)
        hue_w = np.clip((40.0 - angle) / 15.0, 0.0, 1.0)
        m = max(dominant.chroma, 1e-3)
        chroma_w = np.clip((chroma - 0.4 * m) / (0.15 * m), 0.0, 1.0)
        weight = hue_w * chroma_w
    soft = cv2.GaussianBlur(weight.astype(np.float32), (0, 0), 1.0)
    return np.asarray(soft * alpha, dtype=np.float32)


def _disc_kernel(radius: float) -> Gray:
    r = max(1, round(radius))
    yy, xx = np.mgrid[-r : r + 1, -r : r + 1].astype(np.float32)
    d = np.sqrt(xx * xx + yy * yy)
    k = np.clip(radius + 0.5 - d, 0.0, 1.0)
    out: Gray = (k / k.sum()).astype(np.float32)
    return out


def blurred_background(image: ImageArray, alpha: Gray, amount: float) -> ImageArray:
    """Portrait mode's background plate: the image with the subject filled in from its
    surroundings and blurred as a lens would, returned at full size as uint8 (the caller
    composites the sharp subject back over it through ``alpha``).

    The subject is replaced by the surrounding background colours first (normalised
    convolution with the background weight), otherwise its colours would bleed into a halo.
    The blur is a disc kernel in linear light, so bright points bloom into round bokeh. It runs
    at a reduced size that keeps the kernel radius near 8 px: the result is smooth anyway, and
    a 40 px disc at full size would be far too slow."""
    h, w = alpha.shape
    radius = max(1.0, 0.022 * max(h, w) * amount)
    f = min(1.0, 8.0 / radius)
    sw, sh = max(4, round(w * f)), max(4, round(h * f))
    small = cv2.resize(image[..., :3], (sw, sh), interpolation=cv2.INTER_AREA)
    small_f = small.astype(np.float32) * np.float32(1.0 / 255.0)
    a_small = cv2.resize(alpha, (sw, sh), interpolation=cv2.INTER_AREA)
    bg_w = np.clip(1.0 - a_small * 1.15, 0.0, 1.0) ** 2
    fill_sigma = max(2.0, 0.08 * max(sw, sh))
    num = cv2.GaussianBlur(small_f * bg_w[..., None], (0, 0), fill_sigma)
    den = cv2.GaussianBlur(bg_w, (0, 0), fill_sigma)[..., None]
    filled = np.where(den > 1e-4, num / np.maximum(den, 1e-4), small_f)
    blend = bg_w[..., None]
    clean = small_f * blend + filled * (1.0 - blend)
    linear = np.power(np.clip(clean, 0.0, 1.0), np.float32(2.2))
    blurred = cv2.filter2D(linear, -1, _disc_kernel(radius * f), borderType=cv2.BORDER_REFLECT)
    blurred = np.power(np.clip(blurred, 0.0, 1.0), np.float32(1.0 / 2.2))
    plate = np.clip(blurred * 255.0 + 0.5, 0, 255).astype(np.uint8)
    return np.asarray(cv2.resize(plate, (w, h), interpolation=cv2.INTER_CUBIC), np.uint8)
