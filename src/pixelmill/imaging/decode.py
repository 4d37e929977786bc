"""Turn untrusted image bytes into a validated RGB/RGBA pixel array.

The order of checks is the point of this module: cheap refusals first (empty, too many bytes,
unknown magic bytes), then the pixel count *declared in the header*, and only then the actual
decode. A 300 KB PNG can declare 50000 x 50000 pixels (7.5 GB of RGB); it must be refused before
a single row is inflated.

The format comes from the bytes (magic numbers), never from a filename or a declared content
type: clients label parts arbitrarily (the MCP client sends ``image/png`` for unknown extensions,
the SDK sends no part type at all).
"""

from __future__ import annotations

import io
import struct
import zlib
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageOps, UnidentifiedImageError

from pixelmill.imaging.errors import (
    EMPTY_IMAGE,
    SUPPORTED_FORMATS_TEXT,
    ImageInputError,
    too_large_message,
)

InputFormat = Literal["jpeg", "png", "webp"]
"""An input format we decode."""

# Pillow's plugin names; passing them to ``Image.open(formats=...)`` stops Pillow from trying
# every other plugin it knows (PSD, EPS, ...) on data that sniffed as one of ours.
_PIL_FORMAT: Final[dict[InputFormat, str]] = {"jpeg": "JPEG", "png": "PNG", "webp": "WEBP"}
_DISPLAY_NAME: Final[dict[InputFormat, str]] = {"jpeg": "JPEG", "png": "PNG", "webp": "WebP"}

# Formats we recognise only to name them in the refusal message.
_KNOWN_UNSUPPORTED: Final[tuple[tuple[bytes, int, str], ...]] = (
    (b"GIF87a", 0, "GIF"),
    (b"GIF89a", 0, "GIF"),
    (b"BM", 0, "BMP"),
    (b"II*\x00", 0, "TIFF"),
    (b"MM\x00*", 0, "TIFF"),
    (b"ftypavif", 4, "AVIF"),
    (b"ftypheic", 4, "HEIC"),
    (b"ftypmif1", 4, "HEIF"),
    (b"\x00\x00\x01\x00", 0, "ICO"),
    (b"8BPS", 0, "PSD"),
    (b"%PDF", 0, "PDF"),
)

# Every error Pillow is known to raise from a damaged stream: truncation ("image file is
# truncated", "broken data stream"), bad chunks (SyntaxError is Pillow's "broken PNG file"),
# short reads in header parsing (struct.error, EOFError) and zlib failures.
_DECODE_ERRORS: Final = (OSError, SyntaxError, ValueError, EOFError, struct.error, zlib.error)

# EXIF orientation values that need a transpose (1 is "already upright").
_ORIENTATION_TAG: Final = 0x0112
_TRANSPOSING_ORIENTATIONS: Final = frozenset(range(2, 9))


@dataclass(frozen=True)
class ImageLimits:
    """Input limits, chosen by the caller (plan file size, the 50 MB ceiling, max pixels).

    ``max_bytes`` bounds the encoded input; ``max_pixels`` bounds ``width * height`` as declared
    in the header, which is what decoding will allocate.
    """

    max_bytes: int
    max_pixels: int

    def __post_init__(self) -> None:
        if self.max_bytes <= 0 or self.max_pixels <= 0:
            raise ValueError("ImageLimits.max_bytes and max_pixels must be positive")


@dataclass(frozen=True)
class DecodedImage:
    """A decoded, upright image.

    ``pixels`` is uint8, ``(height, width, 3)`` RGB, or ``(height, width, 4)`` RGBA (straight,
    not premultiplied, alpha) exactly when ``had_alpha`` is true: the source carried an alpha
    channel or a transparency key (PNG ``tRNS``, palette alpha). ``width``/``height`` are after
    EXIF orientation; ``bytes_in`` is the size of the encoded input.

    ``pixels`` is C-contiguous and read-only, like the value it belongs to: the same decoded
    input may be handed to several steps, so a step that edits in place works on
    ``pixels.copy()``.
    """

    pixels: npt.NDArray[np.uint8]
    format: InputFormat
    width: int
    height: int
    bytes_in: int
    had_alpha: bool


def sniff_format(data: bytes) -> InputFormat | None:
    """Return the format named by the magic bytes at the start of ``data``, or ``None``.

    Only the formats we decode are recognised: JPEG (``FF D8 FF``), PNG (its 8-byte
    signature) and WebP (a RIFF container of type ``WEBP``).
    """
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def decode_image(data: bytes, limits: ImageLimits) -> DecodedImage:
    """Validate and decode ``data`` into an upright RGB or RGBA array.

    Raises :class:`ImageInputError` with ``EMPTY_INPUT``, ``FILE_TOO_LARGE``,
    ``INVALID_FORMAT`` (anything but JPEG, PNG, WebP), ``TOO_MANY_PIXELS`` (checked on the
    header, before any pixel is decoded) or ``CORRUPT_IMAGE`` (truncated or damaged data).
    EXIF orientation is applied; palette, grey, CMYK and 16-bit inputs become 8-bit RGB(A);
    of an animated WebP or PNG only the first frame is returned.
    """
    if not data:
        raise ImageInputError("EMPTY_INPUT", EMPTY_IMAGE)
    if len(data) > limits.max_bytes:
        raise ImageInputError("FILE_TOO_LARGE", too_large_message(len(data), limits.max_bytes))
    fmt = sniff_format(data)
    if fmt is None:
        raise ImageInputError("INVALID_FORMAT", _unsupported_message(data))

    # The declared size is read from the header by hand, before Pillow runs: Pillow's WebP
    # plugin builds libwebp's decoder (which allocates the whole canvas) inside Image.open, and
    # for every format this lets our limit, with its clear message, come first.
    declared = _declared_size(data, fmt)
    if declared is not None:
        _check_pixels(*declared, limits)
    elif fmt == "webp":
        raise ImageInputError("CORRUPT_IMAGE", "The WebP image header is damaged.")

    try:
        # Lazy: this parses headers only. Pillow's own bomb guard (a backstop when the caller's
        # limit is above Pillow's, or our header reading gave up) raises DecompressionBombError
        # here, and a DecompressionBombWarning that is an exception only where warnings are
        # configured as errors; both are ours to report.
        image = Image.open(io.BytesIO(data), formats=[_PIL_FORMAT[fmt]])
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise _too_many_pixels_from_pillow(limits) from exc
    except UnidentifiedImageError as exc:
        raise ImageInputError(
            "CORRUPT_IMAGE", f"The data looks like {_DISPLAY_NAME[fmt]} but its header is damaged."
        ) from exc
    except _DECODE_ERRORS as exc:
        raise ImageInputError(
            "CORRUPT_IMAGE", f"The {_DISPLAY_NAME[fmt]} image header could not be read."
        ) from exc

    with image:
        width, height = image.size
        _check_pixels(width, height, limits)
        try:
            image.load()
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise _too_many_pixels_from_pillow(limits) from exc
        except _DECODE_ERRORS as exc:
            raise ImageInputError(
                "CORRUPT_IMAGE",
                f"The {_DISPLAY_NAME[fmt]} image is truncated or damaged and cannot be decoded.",
            ) from exc
        had_alpha = image.has_transparency_data
        upright = _apply_exif_orientation(image)
        pixels = np.ascontiguousarray(_to_rgb_or_rgba(upright, had_alpha))
    pixels.flags.writeable = False

    return DecodedImage(
        pixels=pixels,
        format=fmt,
        width=int(pixels.shape[1]),
        height=int(pixels.shape[0]),
        bytes_in=len(data),
        had_alpha=had_alpha,
    )


def _unsupported_message(data: bytes) -> str:
    name = next(
        (label for magic, at, label in _KNOWN_UNSUPPORTED if data[at : at + len(magic)] == magic),
        None,
    )
    found = f"{name} images are not supported" if name else "Unsupported or unrecognised image"
    return f"{found}; supported formats are {SUPPORTED_FORMATS_TEXT}."


def _check_pixels(width: int, height: int, limits: ImageLimits) -> None:
    if width <= 0 or height <= 0:
        raise ImageInputError("CORRUPT_IMAGE", "The image declares an empty size.")
    if width * height > limits.max_pixels:
        raise ImageInputError(
            "TOO_MANY_PIXELS",
            f"The image is {width}x{height} ({width * height} pixels); "
            f"the limit is {limits.max_pixels} pixels.",
        )


def _too_many_pixels_from_pillow(limits: ImageLimits) -> ImageInputError:
    return ImageInputError(
        "TOO_MANY_PIXELS",
        f"The image declares more pixels than can be decoded safely; "
        f"the limit is {limits.max_pixels} pixels.",
    )


def _declared_size(data: bytes, fmt: InputFormat) -> tuple[int, int] | None:
    """(width, height) as the header declares it, or None where we cannot tell."""
    if fmt == "png":
        # The IHDR chunk must come first; width and height are its first two fields.
        if len(data) < 24 or data[12:16] != b"IHDR":
            return None
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if fmt == "jpeg":
        return _jpeg_declared_size(data)
    return _webp_declared_size(data)


# Start-of-frame markers (baseline, progressive, lossless, arithmetic); C4, C8 and CC are not.
_JPEG_SOF: Final = frozenset(
    {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
)


def _jpeg_declared_size(data: bytes) -> tuple[int, int] | None:
    """Walk the marker segments to the first start-of-frame. Anything unusual (junk between
    segments, a height deferred to a DNL marker) returns None and leaves it to Pillow, whose
    JPEG open also reads headers only."""
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:  # stand-alone markers, no length
            pos += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image, or scan data before any frame header
            return None
        if marker in _JPEG_SOF:
            if pos + 9 > len(data):
                return None
            height = int.from_bytes(data[pos + 5 : pos + 7], "big")
            width = int.from_bytes(data[pos + 7 : pos + 9], "big")
            return (width, height) if height else None
        pos += 2 + int.from_bytes(data[pos + 2 : pos + 4], "big")
    return None


def _webp_declared_size(data: bytes) -> tuple[int, int] | None:
    """Canvas size from a WebP header (VP8X, VP8L or VP8 first chunk), or None if unreadable.

    Layouts from the WebP container and bitstream specifications (RFC 9649).
    """
    if len(data) < 30:
        return None
    chunk = data[12:16]
    if chunk == b"VP8X":
        # 24-bit little-endian "canvas width/height minus one" at payload offsets 4 and 7.
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L":
        if data[20] != 0x2F:
            return None
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":
        # 3-byte frame tag, then the key-frame start code, then 14-bit width and height.
        if data[23:26] != b"\x9d\x01\x2a":
            return None
        width = int.from_bytes(data[26:28], "little") & 0x3FFF
        height = int.from_bytes(data[28:30], "little") & 0x3FFF
        return width, height
    return None


def _to_rgb_or_rgba(image: Image.Image, had_alpha: bool) -> npt.NDArray[np.uint8]:
    """8-bit RGB, or RGBA when the source had transparency, whatever Pillow's mode."""
    mode = image.mode
    if mode in ("I;16", "I;16B", "I;16L", "I"):
        # 16-bit greyscale PNG. Pillow's convert("L") clips values above 255 instead of
        # scaling them, which would turn most of the image white; scale 0..65535 to 0..255.
        wide = np.asarray(image).astype(np.uint32)
        grey = ((np.clip(wide, 0, 65535) * 255 + 32767) // 65535).astype(np.uint8)
        channels = [grey, grey, grey]
        transparency = image.info.get("transparency")
        if had_alpha and isinstance(transparency, int):
            channels.append(np.where(wide == transparency, 0, 255).astype(np.uint8))
        return np.ascontiguousarray(np.stack(channels, axis=-1))
    target = "RGBA" if had_alpha else "RGB"
    # convert() honours a tRNS colour key or palette alpha when the target has alpha, and
    # turns CMYK (including Adobe's inverted JPEG CMYK, already handled by the decoder),
    # YCbCr, 1-bit, L, LA and P into 8-bit RGB(A).
    converted = image if mode == target else image.convert(target)
    return np.asarray(converted, dtype=np.uint8)


def _apply_exif_orientation(image: Image.Image) -> Image.Image:
    """Return ``image`` rotated/flipped as its EXIF Orientation tag says (JPEG, PNG eXIf, WebP).

    A damaged EXIF block is not a reason to refuse an image that decodes fine: it is treated
    as "no orientation". Transposing keeps the mode, palette and transparency info, so it can
    run before the mode conversion.
    """
    try:
        orientation = image.getexif().get(_ORIENTATION_TAG, 1)
        if orientation not in _TRANSPOSING_ORIENTATIONS:
            return image
        # ImageOps.exif_transpose holds the canonical orientation -> transpose table.
        return ImageOps.exif_transpose(image)
    except (*_DECODE_ERRORS, KeyError, TypeError, IndexError):
        return image
