"""Encode result pixels into PNG, JPEG or WebP bytes, and name output formats.

Engines hand back uint8 RGB ``(H, W, 3)``, RGBA ``(H, W, 4)`` or greyscale ``(H, W)`` arrays;
this module is the only place that chooses encoder settings, so every surface writes the same
bytes for the same pixels.
"""

from __future__ import annotations

import io
from typing import Final, Literal

import cv2
import fpng
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

# PNG goes through libpng in OpenCV, not Pillow, because there the row filter can be fixed and
# zlib's run-length strategy chosen: libpng's adaptive filter choice (what Pillow uses) tries all
# five filters on every row, and was about half the encode time even with no compression at all.
# One filter + Z_RLE at level 1 encodes 3-4x faster than Pillow at level 3 and the files are no
# larger (shared 2-core dev machine, bench/bench_background_vs_rembg.py --png measures it):
# 1 MP RGBA cut-out: Up filter 39 ms / 1.06 MB against 108-142 ms / 1.05 MB at Pillow level 3;
# 4 MP RGB upscale: Paeth filter ~150 ms / 3.43 MB against ~600 ms / 3.79 MB.
# Cut-outs are mostly flat runs (transparent background zeroed) where Up is cheapest; opaque
# photos compress best with Paeth.
# _FPNG: images with alpha (cut-outs, transparent results) are written by fpng instead
# (Geldreich's single-pass PNG writer, MIT wrapper ``fpng`` on PyPI): the same 1 MP RGBA cut-out
# in 6.8 ms / 1.11 MB against libpng's 39.6 ms / 1.04 MB (Up, RLE, level 1), lossless. Opaque
# RGB stays on libpng: fpng wrote the 4 MP upscale in 39 ms but 4.58 MB against 316 ms /
# 3.44 MB, a third more to download for every photo (measured side by side on this machine).
_PNG_PARAMS_ALPHA: Final = [
    cv2.IMWRITE_PNG_COMPRESSION,
    1,
    cv2.IMWRITE_PNG_STRATEGY,
    cv2.IMWRITE_PNG_STRATEGY_RLE,
    cv2.IMWRITE_PNG_FILTER,
    cv2.IMWRITE_PNG_FILTER_UP,
]
_PNG_PARAMS_OPAQUE: Final = [
    cv2.IMWRITE_PNG_COMPRESSION,
    1,
    cv2.IMWRITE_PNG_STRATEGY,
    cv2.IMWRITE_PNG_STRATEGY_RLE,
    cv2.IMWRITE_PNG_FILTER,
    cv2.IMWRITE_PNG_FILTER_PAETH,
]
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
        return encode_png(array)
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


def encode_png(pixels: npt.NDArray[np.uint8]) -> bytes:
    """Lossless PNG of uint8 ``(H, W)``, ``(H, W, 3)`` or ``(H, W, 4)`` pixels (RGB order), with
    the fast filter and zlib settings above; 8-bit, colour type grey, RGB or RGBA as given.
    RGBA goes through fpng (``_FPNG``)."""
    array = _checked_pixels(pixels)
    if array.ndim == 3 and array.shape[2] == 4:
        return bytes(fpng.from_ndarray(np.ascontiguousarray(array)))
    if array.ndim == 3:
        code = cv2.COLOR_RGBA2BGRA if array.shape[2] == 4 else cv2.COLOR_RGB2BGR
        array = np.asarray(cv2.cvtColor(array, code), dtype=np.uint8)
    params = _PNG_PARAMS_ALPHA if array.ndim == 3 and array.shape[2] == 4 else _PNG_PARAMS_OPAQUE
    ok, encoded = cv2.imencode(".png", array, params)
    if not ok:  # pragma: no cover - libpng fails only on allocation errors
        raise MemoryError("PNG encoding failed")
    return encoded.tobytes()


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
