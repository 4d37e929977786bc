"""The no-reference quality score the enhancer uses to rank its variants.

``score = 100 × (0.25·exposure + 0.20·contrast + 0.10·range + 0.25·sharpness + 0.20·colour)
− noise − clipping − departure``

Each positive term is about 1 at the level of a well-made photograph and saturates softly
beyond it (``sat(r) = (1 − e^(−2r)) / (1 − e^(−2))`` of the ratio ``r`` to that level: 0.73 at
half, 1 at the level, never above 1.16), so a variant gains little by pushing one property past
"good" (over-sharpening, over-saturating) while a small real improvement still counts. A
well-made photograph scores about 95–107; a darkened or washed-out one 50–80:

- **exposure**: 1 while the mean luminance is in 0.38..0.60, falling linearly to 0 at 0.05 / 0.95;
- **contrast**: luminance standard deviation / 0.20 (an ordinary well-exposed photo: 0.2–0.3);
- **range**: (99th − 1st percentile of luminance) / 0.85;
- **sharpness**: mean gradient of the strongest 10 % of edges / 0.25 (see
  :func:`~pixelmill.engines.runtime.measures.gradient_sharpness`);
- **colour**: Hasler–Süsstrunk colourfulness / 45 ("averagely colourful"); a greyscale image
  scores 0 here for every variant, which does not change the ranking.

Penalties, in score points:

- **noise**: 2.5 per grey level of estimated luminance noise σ above 2.5 (capped at 40), so a
  variant that amplifies grain loses what its sharpening earned;
- **clipping**: 150 × the fraction of pixels crushed to black or blown to white beyond the
  first 1 % (which most photos have) or, when the original is given, beyond the original's own
  fraction (a black sky is content, not a defect);
- **departure** (only when the original is given): 150 × how far the structural similarity
  with the original falls below 0.95, and 20 × how far the mean chroma grows beyond 1.6× the
  original's. Tone changes are free (they are the point of enhancing), but halos, ringing,
  posterisation and cartoon colour are not, which keeps the ranking from choosing an
  over-processed variant whose raw statistics look good.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.measures import (
    colourfulness,
    exposure_stats,
    gradient_sharpness,
    luminance,
    mean_chroma,
    noise_sigma,
    resize_longest,
    structural_similarity,
)

SCORE_SIDE = 768
"""Tone and colour terms are measured on a copy this size: they do not depend on resolution,
and this keeps scoring six variants of a 12 MP photo cheap. Sharpness and noise use their own
sizes (see ``runtime.measures``)."""


@dataclass(frozen=True)
class QualityScore:
    """A score and the terms it is made of (all JSON-friendly floats)."""

    total: float
    terms: dict[str, float] = field(default_factory=dict)


def _sat(ratio: float) -> float:
    return float((1.0 - math.exp(-2.0 * ratio)) / (1.0 - math.exp(-2.0)))


def _exposure_term(mean: float) -> float:
    if mean < 0.38:
        return max(0.0, (mean - 0.05) / (0.38 - 0.05))
    if mean > 0.60:
        return max(0.0, (0.95 - mean) / (0.95 - 0.60))
    return 1.0


def quality_score(image: ImageArray, original: ImageArray | None = None) -> QualityScore:
    """Score an RGB(A) image; pass the ``original`` to add the departure penalty."""
    rgb = image[..., :3]
    small = resize_longest(rgb, SCORE_SIDE)
    y_full = luminance(rgb)
    y = luminance(small)
    ex = exposure_stats(y)
    terms: dict[str, float] = {
        "exposure": _exposure_term(ex.mean),
        "contrast": _sat(ex.std / 0.20),
        "range": _sat(ex.dynamic_range / 0.85),
        "sharpness": _sat(gradient_sharpness(y_full) / 0.25),
        "colour": _sat(colourfulness(small) / 45.0),
    }
    positive = 100.0 * (
        0.25 * terms["exposure"]
        + 0.20 * terms["contrast"]
        + 0.10 * terms["range"]
        + 0.25 * terms["sharpness"]
        + 0.20 * terms["colour"]
    )
    sigma = noise_sigma(rgb)
    noise_pen = min(40.0, 2.5 * max(0.0, sigma - 2.5))
    clipped = ex.shadows_clipped + ex.highlights_clipped
    allowed_clipping = 0.01
    departure = 0.0
    if original is not None:
        orig = original[..., :3]
        orig_small = resize_longest(orig, SCORE_SIDE)
        orig_y = luminance(orig_small)
        orig_ex = exposure_stats(orig_y)
        allowed_clipping = max(
            allowed_clipping, orig_ex.shadows_clipped + orig_ex.highlights_clipped
        )
        ssim_s = structural_similarity(orig_y, y)
        chroma_ratio = mean_chroma(small) / (mean_chroma(orig_small) + 2.0)
        departure = 150.0 * max(0.0, 0.95 - ssim_s) + 20.0 * max(0.0, chroma_ratio - 1.6)
        terms["structure_kept"] = ssim_s
        terms["chroma_ratio"] = chroma_ratio
    clip_pen = 150.0 * max(0.0, clipped - allowed_clipping)
    terms.update(noise_sigma=sigma, noise_penalty=noise_pen, clipping_penalty=clip_pen)
    terms["departure_penalty"] = departure
    total = positive - noise_pen - clip_pen - departure
    return QualityScore(total=round(total, 2), terms={k: round(v, 4) for k, v in terms.items()})
