"""Benchmark ``pixelmill.imaging``: decode (with EXIF orientation) and encode speed per format.

Run by hand: ``.venv/bin/python bench/bench_imaging.py [--sizes 1 12] [--repeat 3]``.

Input is a real photo (scikit-image's ``astronaut``, offline) resized to about 1 and 12 MP and
saved with EXIF Orientation 6, so every decode also pays for the rotation a phone photo needs.
Reported: milliseconds per megapixel (median of ``--repeat`` runs after a warm-up) and sizes.
"""

from __future__ import annotations

import argparse
import io
from functools import partial

import numpy as np
import numpy.typing as npt
from PIL import Image
from skimage import data as skdata

from _common import ms_per_mp, print_table, resize_to_area, time_call
from pixelmill.imaging import ImageLimits, decode_image, encode_image

LIMITS = ImageLimits(max_bytes=200 * 1024 * 1024, max_pixels=100_000_000)

# (label, Pillow save parameters) for the *input* files the decoder is timed on.
INPUTS: list[tuple[str, str, dict[str, object]]] = [
    ("jpeg", "JPEG", {"quality": 90}),
    ("png", "PNG", {}),
    ("webp", "WEBP", {"quality": 90}),
]
# (label, format, quality) for the encoder.
OUTPUTS: list[tuple[str, str, int]] = [
    ("jpeg q95", "jpeg", 95),
    ("jpeg q80", "jpeg", 80),
    ("png", "png", 95),
    ("webp q90", "webp", 90),
    ("webp lossless (q100)", "webp", 100),
]


def photo(megapixels: float) -> npt.NDArray[np.uint8]:
    base = np.ascontiguousarray(skdata.astronaut(), dtype=np.uint8)  # type: ignore[no-untyped-call]
    return resize_to_area(base, megapixels)


def input_file(pixels: npt.NDArray[np.uint8], fmt: str, params: dict[str, object]) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 degrees clockwise to display", as phones write it
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format=fmt, exif=exif, **params)
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1.0, 12.0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    decode_rows: list[dict[str, object]] = []
    encode_rows: list[dict[str, object]] = []
    for megapixels in args.sizes:
        pixels = photo(megapixels)
        h, w = pixels.shape[:2]
        size = f"{w}x{h} ({h * w / 1e6:.1f} MP)"
        for label, fmt, params in INPUTS:
            data = input_file(pixels, fmt, params)
            decoded = decode_image(data, LIMITS)
            assert (decoded.width, decoded.height) == (h, w), "orientation 6 must swap sides"
            seconds = time_call(partial(decode_image, data, LIMITS), repeat=args.repeat)
            decode_rows.append(
                {
                    "input": label,
                    "size": size,
                    "file MB": len(data) / 1e6,
                    "ms": seconds * 1000,
                    "ms/MP": ms_per_mp(seconds, h, w),
                }
            )
        for label, fmt, quality in OUTPUTS:
            out = encode_image(pixels, fmt, quality)
            assert decode_image(out, LIMITS).pixels.shape[:2] == (h, w)
            seconds = time_call(partial(encode_image, pixels, fmt, quality), repeat=args.repeat)
            encode_rows.append(
                {
                    "output": label,
                    "size": size,
                    "file MB": len(out) / 1e6,
                    "ms": seconds * 1000,
                    "ms/MP": ms_per_mp(seconds, h, w),
                }
            )
    print_table(decode_rows, "decode_image (sniff, limits, decode, EXIF rotate, to RGB array)")
    print_table(encode_rows, "encode_image")


if __name__ == "__main__":
    main()
