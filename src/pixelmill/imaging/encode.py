"""Encode result pixels into PNG, JPEG or WebP bytes, and name output formats.

Engines hand back uint8 RGB ``(H, W, 3)``, RGBA ``(H, W, 4)`` or greyscale ``(H, W)`` arrays;
this module is the only place that chooses encoder settings, so every surface writes the same
bytes for the same pixels.
"""

from __future__ import annotations

import io
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
from PIL import Image

from pixelmill.imaging.errors import ImageInputError

OutputFormat = Literal["png", "jpeg", "webp"]
"""A format we write. ``jpg`` is accepted by :func:`normalize_format` and spelled ``jpeg``."""

_ALIASES: Final[dict[str, OutputFormat]] = {
    "png": "png",
    "jpg": "jpeg",
    "jpeg": "jpeg",
    "webp": "webp",
}

_CONTENT_TYPES: Final[dict[OutputFormat, str]] = {
    "png": "image/png",
    "jpeg": "image/jpeg",
    "webp": "image/webp",
}

_EXTENSIONS: Final[dict[OutputFormat, str]] = {"png": "png", "jpeg": "jpg", "webp": "webp"}

MAX_DIMENSION: Final[dict[OutputFormat, int]] = {
    "png": 2**31 - 1,
    "jpeg": 65_535,
    "webp": 16_383,
}
"""The largest width or height each format can store: check it before running an engine whose
output would not fit (an 8x upscale of a 2100-pixel-wide image cannot be a WebP)."""

# zlib level 3, not Pillow's default 6: on photos level 6 took about 3x as long for files only
# ~8% smaller (1 MP: 172 ms / 1.30 MB at level 3, 560 ms / 1.20 MB at 6, 1592 ms / 1.18 MB at
# 9, on the shared dev machine), and synchronous requests wait for this encode.
# bench/bench_imaging.py measures it.
_PNG_COMPRESS_LEVEL: Final = 3
# libwebp "method" trades speed for size (0 fast .. 6 slow); 4 is libwebp's default.
_WEBP_METHOD: Final = 4
# In lossless mode libwebp's "quality" is compression effort, not fidelity.
_WEBP_LOSSLESS_EFFORT: Final = 50
# At high JPEG qualities chroma subsampling is the largest remaining loss (red edges and
# saturated text smear); callers asking for >= 90 get full-resolution chroma (4:4:4).
_JPEG_FULL_CHROMA_FROM: Final = 90


def normalize_format(name: str) -> OutputFormat:
    """Map a user-supplied format name (``png``, ``jpg``, ``JPEG``, ``webp``, any case,
    surrounding spaces and a leading dot tolerated) to an :data:`OutputFormat`.

    Raises :class:`ImageInputError` ``UNSUPPORTED_OUTPUT_FORMAT`` for anything else.
    """
    key = name.strip().lower().removeprefix(".")
    fmt = _ALIASES.get(key)
    if fmt is None:
        raise ImageInputError(
            "UNSUPPORTED_OUTPUT_FORMAT",
            f"Unsupported output format {name!r}; choose one of png, jpg (jpeg) or webp.",
        )
    return fmt


def content_type(fmt: str) -> str:
    """The MIME type to serve a result of format ``fmt`` with (``image/jpeg`` for ``jpg``)."""
    return _CONTENT_TYPES[normalize_format(fmt)]


def file_extension(fmt: str) -> str:
    """The conventional file extension, without a dot (``jpg`` for JPEG)."""
    return _EXTENSIONS[normalize_format(fmt)]


def encode_image(pixels: npt.NDArray[np.uint8], fmt: str, quality: int = 95) -> bytes:
    """Encode ``pixels`` (uint8 ``(H, W)``, ``(H, W, 3)`` or ``(H, W, 4)``) as ``fmt``.

    - PNG: lossless, alpha kept; ``quality`` is ignored.
    - JPEG: ``quality`` 1..100; an alpha channel is composited onto white (straight alpha,
      ``out = rgb * a + 255 * (1 - a)``), because JPEG has no alpha and dropping it would
      reveal whatever colour the engine left under transparent pixels.
    - WebP: lossy at ``quality`` 1..99 with alpha kept; ``quality == 100`` means lossless
      (exact, including the colour of fully transparent pixels).

    Raises ``ValueError``/``TypeError`` for arrays an engine should never produce, and
    :class:`ImageInputError` ``OUTPUT_TOO_LARGE`` when the size exceeds :data:`MAX_DIMENSION`.
    """
    out_fmt = normalize_format(fmt)
    array = _checked_pixels(pixels)
    if not 1 <= quality <= 100:
        raise ValueError(f"quality must be between 1 and 100, got {quality}")
    height, width = array.shape[:2]
    limit = MAX_DIMENSION[out_fmt]
    if width > limit or height > limit:
        raise ImageInputError(
            "OUTPUT_TOO_LARGE",
            f"A {width}x{height} image cannot be written as {out_fmt.upper()} "
            f"(at most {limit} pixels per side); choose another output format.",
        )

    buffer = io.BytesIO()
    if out_fmt == "jpeg":
        if array.ndim == 3 and array.shape[2] == 4:
            array = flatten_on_white(array)
        subsampling = 0 if quality >= _JPEG_FULL_CHROMA_FROM else 2
        Image.fromarray(array).save(buffer, format="JPEG", quality=quality, subsampling=subsampling)
    elif out_fmt == "png":
        Image.fromarray(array).save(buffer, format="PNG", compress_level=_PNG_COMPRESS_LEVEL)
    elif quality == 100:
        Image.fromarray(array).save(
            buffer,
            format="WEBP",
            lossless=True,
            quality=_WEBP_LOSSLESS_EFFORT,
            method=_WEBP_METHOD,
            exact=True,
        )
    else:
        Image.fromarray(array).save(buffer, format="WEBP", quality=quality, method=_WEBP_METHOD)
    return buffer.getvalue()


def flatten_on_white(rgba: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """Composite straight-alpha RGBA onto an opaque white background; returns RGB.

    Integer arithmetic with rounding: ``(c * a + 255 * (255 - a) + 127) // 255``, so opaque
    pixels are unchanged and fully transparent ones become exactly white.
    """
    if rgba.ndim != 3 or rgba.shape[2] != 4:
        raise ValueError(f"expected an (H, W, 4) array, got shape {rgba.shape}")
    colour = rgba[..., :3].astype(np.uint32)
    alpha = rgba[..., 3:4].astype(np.uint32)
    flat = (colour * alpha + 255 * (255 - alpha) + 127) // 255
    return flat.astype(np.uint8)


def _checked_pixels(pixels: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    if not isinstance(pixels, np.ndarray):
        raise TypeError(f"pixels must be a numpy array, got {type(pixels).__name__}")
    if pixels.dtype != np.uint8:
        raise TypeError(f"pixels must be uint8, got {pixels.dtype}")
    if pixels.ndim == 3 and pixels.shape[2] == 1:
        pixels = pixels[..., 0]
    if not (pixels.ndim == 2 or (pixels.ndim == 3 and pixels.shape[2] in (3, 4))):
        raise ValueError(f"pixels must be (H, W), (H, W, 3) or (H, W, 4), got {pixels.shape}")
    if pixels.shape[0] == 0 or pixels.shape[1] == 0:
        raise ValueError(f"cannot encode an empty image of shape {pixels.shape}")
    # Pillow reads the buffer directly; views (crops, channel slices) must be made contiguous.
    return np.ascontiguousarray(pixels)
