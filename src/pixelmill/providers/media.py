"""What crosses the wire: pixels sent as PNG (scaled to what a model takes) and a provider's
output bytes decoded back to pixels, a garbage answer being the provider's failure."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.imaging import ImageInputError, ImageLimits, decode_image, encode_image
from pixelmill.providers.http import MAX_OUTPUT_BYTES, ProviderFailure

Pixels = npt.NDArray[np.uint8]

VISION_SIDE = 1024
"""Images sent to a vision-language model are at most this long (hosted models scale larger ones
down themselves, and pay per pixel tile)."""

IMAGE_SIDE = 2048
"""Images sent to an image model are at most this long (upload limits; models work below it)."""


def limit(pixels: Pixels, max_side: int) -> Pixels:
    """``pixels`` scaled down (area average) to ``max_side`` on the long side, if larger."""
    h, w = pixels.shape[:2]
    if max(h, w) <= max_side:
        return pixels
    f = max_side / max(h, w)
    size = (max(1, round(w * f)), max(1, round(h * f)))
    return np.asarray(cv2.resize(pixels, size, interpolation=cv2.INTER_AREA), np.uint8)


def png_bytes(pixels: Pixels, max_side: int | None = None) -> bytes:
    """``pixels`` as PNG (scaled down to ``max_side`` on the long side when given)."""
    return encode_image(pixels if max_side is None else limit(pixels, max_side), "png")


def decode_output(data: bytes, provider: str, max_pixels: int) -> Pixels:
    """A provider's output as RGB(A) pixels; garbage is a provider failure (not the caller's
    4xx)."""
    try:
        return decode_image(data, ImageLimits(MAX_OUTPUT_BYTES, max_pixels)).pixels
    except ImageInputError as exc:
        raise ProviderFailure(provider, f"the output is not a usable image ({exc})") from None
