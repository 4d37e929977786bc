"""Procedural material textures (marble, wood, concrete, linen, paper, velvet, tiles) and the
noise they are built from.

Everything is float32, values 0..1, shape ``(H, W)`` for noise and ``(H, W, 3)`` for textures,
and deterministic for a given ``numpy.random.Generator`` state. Noise is "value noise": a coarse
grid of random values upsampled with bicubic interpolation, summed over octaves (fBm). It costs a
few milliseconds per octave per megapixel because the heavy lifting is one ``cv2.resize`` each,
which is why it is used here instead of per-pixel gradient noise.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.runtime.palette import Color

Gray = npt.NDArray[np.float32]
"""An ``(H, W)`` float32 field."""
Rgb = npt.NDArray[np.float32]
"""An ``(H, W, 3)`` float32 sRGB image, 0..1."""


def value_noise(h: int, w: int, rng: np.random.Generator, cells_y: float, cells_x: float) -> Gray:
    """One octave of smooth noise with about ``cells_y`` × ``cells_x`` random lattice cells
    across the image (fewer cells along an axis = features stretched along it)."""
    gh = max(2, math.ceil(cells_y) + 2)
    gw = max(2, math.ceil(cells_x) + 2)
    grid = rng.random((gh, gw), dtype=np.float32)
    # Resizing a lattice with a one-cell margin and cropping avoids the clamped, flat borders
    # that cv2.resize produces at the image edges.
    fy, fx = h / max(cells_y, 1e-3), w / max(cells_x, 1e-3)
    big_h, big_w = math.ceil(gh * fy), math.ceil(gw * fx)
    up = cv2.resize(grid, (big_w, big_h), interpolation=cv2.INTER_CUBIC)
    oy, ox = int(fy * 0.5), int(fx * 0.5)
    return np.ascontiguousarray(up[oy : oy + h, ox : ox + w], dtype=np.float32)


def fbm(
    h: int,
    w: int,
    rng: np.random.Generator,
    cells: float = 4.0,
    octaves: int = 5,
    persistence: float = 0.5,
    stretch: float = 1.0,
) -> Gray:
    """Fractal noise normalised to 0..1. ``cells`` is the coarsest octave's feature count
    along the long side; ``stretch`` > 1 elongates features horizontally (wood grain, sea)."""
    long_side = max(h, w)
    finest = cells * (2.0 ** (octaves - 1))
    # The octaves are summed at the smallest resolution that still gives the finest octave
    # ~5 pixels per lattice cell, then upsampled once: the sum is smooth at that scale, and this
    # makes the cost one full-size resize instead of one per octave.
    wh = min(h, max(8, math.ceil(5.0 * finest * h / long_side)))
    ww = min(w, max(8, math.ceil(5.0 * finest * w / long_side / stretch)))
    out = np.zeros((wh, ww), dtype=np.float32)
    amp, total = 1.0, 0.0
    for octave in range(octaves):
        c = cells * (2.0**octave)
        out += amp * value_noise(wh, ww, rng, c * h / long_side, c * w / long_side / stretch)
        total += amp
        amp *= persistence
    if (wh, ww) != (h, w):
        out = np.asarray(cv2.resize(out, (w, h), interpolation=cv2.INTER_CUBIC), np.float32)
    lo, hi = float(out.min()), float(out.max())
    out -= lo
    out *= 1.0 / (hi - lo) if hi > lo else 0.0
    return out


def fine_grain(h: int, w: int, rng: np.random.Generator, sigma: float = 0.7) -> Gray:
    """Zero-mean per-pixel grain (std ≈ 1 before blurring), slightly blurred so it reads as
    material texture rather than sensor noise."""
    g = rng.standard_normal((h, w), dtype=np.float32)
    if sigma > 0:
        return np.asarray(cv2.GaussianBlur(g, (0, 0), sigma), dtype=np.float32)
    return g


def colorize(field: Gray, dark: Color, light: Color) -> Rgb:
    """Map a 0..1 field to an RGB ramp ``dark`` -> ``light``."""
    d = np.asarray(dark, dtype=np.float32)
    span = np.asarray(light, dtype=np.float32) - d
    out: Rgb = field[..., None] * span + d
    return out


def _coords(h: int, w: int) -> tuple[Gray, Gray]:
    """Broadcastable pixel coordinates scaled so the long side spans 0..1."""
    s = 1.0 / max(h, w)
    y = (np.arange(h, dtype=np.float32) * s)[:, None]
    x = (np.arange(w, dtype=np.float32) * s)[None, :]
    return y, x


def _sharpen_ridge(t: Gray, squarings: int) -> Gray:
    """``(1 - |sin t|) ** (2 ** squarings)``: 1 on thin ridges where ``sin t`` crosses zero, by
    repeated in-place squaring (several times cheaper than ``**`` on a megapixel array)."""
    v = np.sin(t)
    np.abs(v, out=v)
    np.subtract(1.0, v, out=v)
    for _ in range(squarings):
        np.multiply(v, v, out=v)
    return v


def marble(h: int, w: int, rng: np.random.Generator, base: Color, vein: Color) -> Rgb:
    """Polished marble: a pale, cloudy base crossed by thin turbulent veins (|sin| of a warped
    diagonal coordinate, sharpened) and fainter secondary veins."""
    y, x = _coords(h, w)
    cloud = fbm(h, w, rng, cells=3.0, octaves=5)
    turb = fbm(h, w, rng, cells=2.5, octaves=6, persistence=0.55)
    a1 = rng.uniform(0.3, 1.2)
    a2 = a1 + rng.uniform(0.8, 1.6)
    f1, f2 = rng.uniform(2.0, 3.5), rng.uniform(5.0, 8.0)
    t1 = (x * math.cos(a1) + y * math.sin(a1)) * (f1 * math.pi) + turb * 7.0
    t2 = (x * math.cos(a2) + y * math.sin(a2)) * (f2 * math.pi) + turb * 9.0
    veins = _sharpen_ridge(t1, 4) + 0.45 * _sharpen_ridge(t2, 5)
    np.clip(veins, 0.0, 1.0, out=veins)
    # A slight blur turns aliased one-pixel ridges into the soft-edged veins of real stone.
    veins = cv2.GaussianBlur(veins, (0, 0), max(0.6, max(h, w) / 1500.0))
    out = colorize(0.92 + 0.08 * cloud, (base[0] * 0.9, base[1] * 0.9, base[2] * 0.9), base)
    v = veins[..., None] * 0.55
    out = out * (1.0 - v) + np.asarray(vein, dtype=np.float32) * v
    return np.asarray(out, dtype=np.float32)


def wood(
    h: int,
    w: int,
    rng: np.random.Generator,
    light: Color,
    dark: Color,
    planks: int = 5,
    vertical: bool = False,
) -> Rgb:
    """Wood planks: growth rings (a sine of a noise-warped coordinate), long streaky grain,
    per-plank tone and dark seams. Planks run horizontally unless ``vertical``."""
    if vertical:
        return np.ascontiguousarray(
            wood(w, h, rng, light, dark, planks=planks, vertical=False).transpose(1, 0, 2)
        )
    y, _ = _coords(h, w)
    warp = fbm(h, w, rng, cells=3.0, octaves=4, stretch=6.0)
    streak = fbm(h, w, rng, cells=24.0, octaves=3, stretch=12.0)
    ring_freq = rng.uniform(40.0, 70.0)
    rings = 0.5 + 0.5 * np.sin((y * ring_freq + warp * 5.0) * (2.0 * math.pi))
    field = 0.45 * rings**3 + 0.55 * streak
    out = colorize(field, light, dark)
    plank_h = h / planks
    rows = np.arange(h, dtype=np.float32)
    plank_idx = np.minimum((rows / plank_h).astype(np.int32), planks - 1)
    tones = rng.uniform(0.86, 1.08, size=planks).astype(np.float32)
    out *= tones[plank_idx][:, None, None]
    # Seams: a dark line 1-2 px wide at each plank boundary, plus one butt joint per plank.
    seam_w = max(1.0, h / 600.0)
    dist = np.abs(rows - np.round(rows / plank_h) * plank_h)
    seam = np.clip(1.0 - dist / seam_w, 0.0, 1.0)
    out *= (1.0 - 0.55 * seam)[:, None, None]
    for p in range(planks):
        x0 = int(rng.uniform(0.15, 0.85) * w)
        r0, r1 = int(p * plank_h), int((p + 1) * plank_h)
        x1 = min(w, x0 + max(1, int(seam_w)))
        out[r0:r1, x0:x1] *= 0.5
    return np.asarray(out, dtype=np.float32)


def concrete(h: int, w: int, rng: np.random.Generator, tone: Color) -> Rgb:
    """Cast concrete: blotchy low-frequency variation, fine grain and sparse dark pores."""
    blotch = fbm(h, w, rng, cells=4.0, octaves=6, persistence=0.6)
    grain = fine_grain(h, w, rng, sigma=0.8)
    pores = (rng.random((h, w), dtype=np.float32) < 0.0012).astype(np.float32)
    spread = cv2.GaussianBlur(pores, (0, 0), max(0.8, max(h, w) / 900.0))
    pores = np.clip(np.asarray(spread, dtype=np.float32) * 4.0, 0.0, 1.0)
    shade = 0.84 + 0.2 * blotch + 0.025 * grain - 0.35 * pores
    return np.asarray(shade[..., None] * np.asarray(tone, dtype=np.float32), dtype=np.float32)


def linen(h: int, w: int, rng: np.random.Generator, tone: Color) -> Rgb:
    """Woven linen: per-thread brightness along both axes, a fine over/under weave pattern and
    soft low-frequency folds."""
    period = max(2.0, max(h, w) / 380.0)
    warp_thread = cv2.GaussianBlur(rng.random((1, w), dtype=np.float32), (0, 0), 0.6)
    weft_thread = cv2.GaussianBlur(rng.random((h, 1), dtype=np.float32), (0, 0), 0.6)
    y = np.arange(h, dtype=np.float32)[:, None]
    x = np.arange(w, dtype=np.float32)[None, :]
    weave = np.sin(x * (math.pi / period)) * np.sin(y * (math.pi / period))
    folds = fbm(h, w, rng, cells=2.5, octaves=3)
    slub = fbm(h, w, rng, cells=40.0, octaves=2, stretch=8.0)
    shade = (
        0.9
        + 0.05 * (warp_thread - 0.5)
        + 0.05 * (weft_thread - 0.5)
        + 0.025 * weave
        + 0.08 * (folds - 0.5)
        + 0.04 * (slub - 0.5)
    )
    return np.asarray(shade[..., None] * np.asarray(tone, dtype=np.float32), dtype=np.float32)


def paper(h: int, w: int, rng: np.random.Generator, tone: Color) -> Rgb:
    """Paper: very soft mottling and short fibres (fine noise stretched in random directions is
    approximated by two stretched octaves at right angles)."""
    mottle = fbm(h, w, rng, cells=5.0, octaves=4)
    fib_a = fbm(h, w, rng, cells=60.0, octaves=2, stretch=5.0)
    fib_b = fbm(w, h, rng, cells=60.0, octaves=2, stretch=5.0).T
    grain = fine_grain(h, w, rng, sigma=0.5)
    shade = 0.94 + 0.05 * mottle + 0.025 * (fib_a - 0.5) + 0.025 * (fib_b - 0.5) + 0.01 * grain
    return np.asarray(shade[..., None] * np.asarray(tone, dtype=np.float32), dtype=np.float32)


def velvet(h: int, w: int, rng: np.random.Generator, tone: Color) -> Rgb:
    """Velvet: deep colour with soft folds; the pile catches light where the folds turn
    (a sheen proportional to the fold slope), which is what makes velvet read as velvet."""
    folds = fbm(h, w, rng, cells=2.0, octaves=3, persistence=0.45, stretch=1.8)
    # Smooth away the value-noise lattice before differentiating: the slope would show it.
    folds = np.asarray(cv2.GaussianBlur(folds, (0, 0), max(1.0, max(h, w) / 60.0)), np.float32)
    gy, gx = np.gradient(folds * (max(h, w) / 6.0))
    sheen = np.clip(np.sqrt(gx * gx + gy * gy), 0.0, 1.0).astype(np.float32)
    sheen = cv2.GaussianBlur(sheen, (0, 0), max(1.0, max(h, w) / 300.0))
    shade = 0.55 + 0.55 * folds
    out = shade[..., None] * np.asarray(tone, dtype=np.float32)
    glint = np.asarray(tone, dtype=np.float32) * 0.6 + 0.4
    out += (0.35 * sheen)[..., None] * glint
    return np.asarray(out, dtype=np.float32)


def subway_tiles(h: int, w: int, rng: np.random.Generator, tone: Color, grout: Color) -> Rgb:
    """Glazed brick-bond wall tiles (2:1) with grout lines, slight per-tile tone variation and
    a soft bevel shading at each tile's edge."""
    tile_h = max(8.0, max(h, w) / 26.0)
    tile_w = tile_h * 2.0
    y = np.arange(h, dtype=np.float32)[:, None]
    x = np.arange(w, dtype=np.float32)[None, :]
    row = np.floor(y / tile_h)
    xs = x + (row % 2) * (tile_w / 2.0)
    col = np.floor(xs / tile_w)
    fy = y / tile_h - row
    fx = xs / tile_w - col
    # Distance to the nearest tile edge, in pixels.
    edge = np.minimum(np.minimum(fy, 1.0 - fy) * tile_h, np.minimum(fx, 1.0 - fx) * tile_w)
    grout_w = max(1.0, tile_h / 14.0)
    is_grout = np.clip(1.0 - (edge - grout_w * 0.5), 0.0, 1.0)
    bevel = np.clip(edge / (tile_h * 0.18), 0.0, 1.0)
    tile_ids = (row * 977.0 + col * 131.0).astype(np.int64)
    jitter = rng.uniform(0.95, 1.03, size=4096).astype(np.float32)
    tone_var = jitter[np.mod(tile_ids, 4096)]
    shade = (0.9 + 0.1 * bevel) * tone_var
    tile = shade[..., None] * np.asarray(tone, dtype=np.float32)
    g = is_grout[..., None]
    out = tile * (1.0 - g) + np.asarray(grout, dtype=np.float32) * g
    return np.asarray(out, dtype=np.float32)
