"""Small test images built in memory: real encoder output, and hand-made hostile files."""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any

import numpy as np
import numpy.typing as npt
from PIL import Image


def gradient(height: int, width: int, channels: int = 3) -> npt.NDArray[np.uint8]:
    """A smooth colour gradient (compresses like a photo, not like noise); with 4 channels the
    alpha ramps from transparent (left) to opaque (right)."""
    y = np.linspace(0, 255, height, dtype=np.float64)[:, None]
    x = np.linspace(0, 255, width, dtype=np.float64)[None, :]
    planes = [np.broadcast_to(x, (height, width)), np.broadcast_to(y, (height, width))]
    planes.append((x + y) / 2)
    if channels == 4:
        planes.append(np.broadcast_to(x, (height, width)))
    return np.ascontiguousarray(np.stack(planes, axis=-1).round().astype(np.uint8))


def pil_bytes(image: Image.Image, fmt: str, **params: Any) -> bytes:
    """Encode ``image`` with Pillow (the reference encoder for decode tests)."""
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **params)
    return buffer.getvalue()


def array_bytes(pixels: npt.NDArray[np.uint8], fmt: str, **params: Any) -> bytes:
    return pil_bytes(Image.fromarray(pixels), fmt, **params)


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bomb(width: int, height: int) -> bytes:
    """A *valid* black 1-bit greyscale PNG of ``width`` x ``height``, built without ever holding
    the raw image: a few hundred KB that inflate to ``height * (1 + ceil(width/8))`` bytes.

    Each block of rows is deflated after a full flush, which resets the compressor, so the
    compressed block can be repeated; the Adler-32 of n zero bytes is (n mod 65521) << 16 | 1.
    """
    row = 1 + (width + 7) // 8  # filter byte + packed bits, all zero
    rows_per_block = 1000
    assert height % rows_per_block == 0
    compressor = zlib.compressobj(9)
    first = compressor.compress(bytes(row * rows_per_block)) + compressor.flush(zlib.Z_FULL_FLUSH)
    repeat = compressor.compress(bytes(row * rows_per_block)) + compressor.flush(zlib.Z_FULL_FLUSH)
    end = compressor.flush(zlib.Z_FINISH)[:-4]  # final empty block, without its checksum
    total = row * height
    adler = ((total % 65521) << 16) | 1
    stream = first + repeat * (height // rows_per_block - 1) + end + struct.pack(">I", adler)
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", ihdr)
        + png_chunk(b"IDAT", stream)
        + png_chunk(b"IEND", b"")
    )


def patch_jpeg_size(data: bytes, width: int, height: int) -> bytes:
    """``data`` (a baseline JPEG) with its SOF0 header claiming ``width`` x ``height``."""
    at = data.index(b"\xff\xc0")
    # marker(2) length(2) precision(1) height(2) width(2)
    return data[: at + 5] + struct.pack(">HH", height, width) + data[at + 9 :]


def patch_webp_canvas(data: bytes, width: int, height: int) -> bytes:
    """``data`` (an extended, VP8X, WebP) with its canvas claiming ``width`` x ``height``."""
    assert data[12:16] == b"VP8X"
    size = (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return data[:24] + size + data[30:]
