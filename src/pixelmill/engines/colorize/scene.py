"""Default colourisation without a reference: small procedural palettes chosen from scene
statistics. This is a heuristic, not a learned colouriser, and the engine says so.

What the scene statistics can honestly tell from a greyscale photo:

- **sky**: a bright, smooth region connected to the top edge → blue, paler towards white;
- **faces** (mediapipe works on greyscale) → a skin tone inside a feathered ellipse;
- everything else gets a lightness-indexed gradient: an *outdoor* one (dark greens and browns
  rising to warm beige) when there is sky, otherwise a *neutral warm* one (the tones of an
  indoor or studio photo under warm light).

Chroma stays moderate (``a*b*`` magnitudes 5–25) so that wrong guesses read as a tint rather
than as a false colour.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.colorize.transfer import gradient_map_chroma, smooth_chroma
from pixelmill.engines.runtime.faces import FaceBox, detect_faces

FloatImage = npt.NDArray[np.float32]


@dataclass(frozen=True)
class GradientPalette:
    """Control stops ``(L*, a*, b*)`` of a lightness-indexed colour gradient."""

    name: str
    stops: tuple[tuple[float, float, float], ...]

    def chroma(self, lightness: FloatImage) -> FloatImage:
        arr = np.array(self.stops, dtype=np.float32)
        return gradient_map_chroma(lightness, arr[:, 0], arr[:, 1:])


NEUTRAL_WARM = GradientPalette(
    "neutral_warm",
    ((0.0, 1.0, 2.0), (25.0, 5.0, 9.0), (50.0, 7.0, 15.0), (75.0, 4.0, 13.0), (100.0, 0.0, 2.0)),
)
"""Shadows a dark brown, mid-tones tan, highlights cream: warm indoor light."""

OUTDOOR = GradientPalette(
    "outdoor",
    (
        (0.0, -1.0, 2.0),
        (25.0, -8.0, 12.0),
        (45.0, -9.0, 20.0),
        (65.0, 0.0, 18.0),
        (85.0, 3.0, 12.0),
        (100.0, 0.0, 2.0),
    ),
)
"""Dark foliage greens in the shadows, olive mid-tones, warm earth and stone in the light."""

SKY_AB = (-6.0, -24.0)
"""A mid sky blue in ``a*b*``; it fades towards white as the sky gets lighter."""

SKIN_AB = (13.0, 17.0)
"""A mid skin tone in ``a*b*`` (light and dark skin differ mostly in lightness, which is kept)."""


def sky_mask(lightness: FloatImage) -> FloatImage:
    """A soft (0..1) mask of a bright, smooth region connected to the top edge.

    Pixels qualify when they are lighter than L* 55 and than the image's median, and their
    5×5 standard deviation is under 3 L* units (clouds and haze pass, foliage and buildings do
    not); only connected components touching the top row count, and only in the upper 60 %.
    The region is then accepted only if it looks like an open sky rather than a bright wall or
    table top: it spans at least half of the top edge, its mean L* is at least 65 and its
    median 15×15 standard deviation is under 2 (measured: the cameraman's sky 0.3, the
    astronaut's backdrop 1.3, the coffee photo's table top 2.7)."""
    h, w = lightness.shape
    mu = cv2.blur(lightness, (5, 5))
    std = np.sqrt(np.maximum(cv2.blur(lightness * lightness, (5, 5)) - mu * mu, 0.0))
    candidate = (lightness > max(55.0, float(np.median(lightness)))) & (std < 3.0)
    candidate[int(0.6 * h) :, :] = False
    count, labels = cv2.connectedComponents(candidate.astype(np.uint8), connectivity=4)
    if count <= 1:
        return np.zeros((h, w), np.float32)
    touching = np.unique(labels[0, :])
    touching = touching[touching != 0]
    region = np.isin(labels, touching)
    if not region.any():
        return np.zeros((h, w), np.float32)
    mu15 = cv2.blur(lightness, (15, 15))
    std15 = np.sqrt(np.maximum(cv2.blur(lightness * lightness, (15, 15)) - mu15 * mu15, 0.0))
    open_sky = (
        float(region[0, :].mean()) >= 0.5
        and float(lightness[region].mean()) >= 65.0
        and float(np.median(std15[region])) < 2.0
    )
    if not open_sky:
        return np.zeros((h, w), np.float32)
    mask = region.astype(np.float32)
    # Close small holes (birds, wires) and feather the edge.
    k = max(3, round(max(h, w) / 100)) | 1
    mask = np.asarray(
        cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8)), dtype=np.float32
    )
    return np.asarray(cv2.GaussianBlur(mask, (0, 0), k / 2.0), dtype=np.float32)


def face_mask(shape: tuple[int, int], faces: list[FaceBox]) -> FloatImage:
    """Feathered ellipses over detected faces (slightly taller than the box, for forehead and
    chin)."""
    h, w = shape
    mask = np.zeros((h, w), np.float32)
    for f in faces:
        centre = (round(f.x + f.w / 2), round(f.y + f.h * 0.55))
        axes = (max(2, round(f.w * 0.55)), max(2, round(f.h * 0.75)))
        cv2.ellipse(mask, centre, axes, 0.0, 0.0, 360.0, 1.0, thickness=-1)
    if not faces:
        return mask
    sigma = max(2.0, 0.12 * max(f.w for f in faces))
    return np.asarray(cv2.GaussianBlur(mask, (0, 0), sigma), dtype=np.float32)


@dataclass(frozen=True)
class SceneChroma:
    """Chroma for a greyscale image plus what it was based on."""

    ab: FloatImage
    palette: str
    sky_fraction: float
    faces: int


def scene_chroma(lightness: FloatImage, grey_rgb: npt.NDArray[np.uint8]) -> SceneChroma:
    """Choose and apply a procedural palette for ``lightness`` (``grey_rgb`` is the same image
    as RGB, for face detection)."""
    sky = sky_mask(lightness)
    sky_fraction = float(sky.mean())
    base = OUTDOOR if sky_fraction > 0.08 else NEUTRAL_WARM
    ab = base.chroma(lightness)
    if sky_fraction > 0.0:
        # Paler towards white: full blue at L* 60, none at L* 100.
        fade = np.clip((100.0 - lightness) / 40.0, 0.0, 1.0)[..., None]
        sky_ab = np.array(SKY_AB, np.float32) * fade
        ab = ab * (1.0 - sky[..., None]) + sky_ab * sky[..., None]
    faces = detect_faces(grey_rgb)
    if faces:
        skin = face_mask(lightness.shape, faces)
        # Skin colour fades out in deep shadow and in blown highlights.
        fade = np.clip(1.0 - np.abs(lightness - 60.0) / 45.0, 0.0, 1.0)[..., None]
        skin_ab = np.array(SKIN_AB, np.float32) * fade
        ab = ab * (1.0 - skin[..., None]) + skin_ab * skin[..., None]
    name = base.name + ("+sky" if sky_fraction > 0.0 else "") + ("+skin" if faces else "")
    return SceneChroma(
        ab=smooth_chroma(lightness, ab.astype(np.float32)),
        palette=name,
        sky_fraction=sky_fraction,
        faces=len(faces),
    )
