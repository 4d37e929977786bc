"""Tests for ``pixelmill.imaging.decode``: sniffing, limits, bombs, damage, modes, orientation."""

from __future__ import annotations

import struct
import time
import warnings

import cv2
import numpy as np
import pytest
from PIL import Image

from pixelmill.imaging import DecodedImage, ImageInputError, ImageLimits, decode_image, sniff_format
from tests.imaging.images import (
    array_bytes,
    gradient,
    patch_jpeg_size,
    patch_webp_canvas,
    pil_bytes,
    png_bomb,
    png_chunk,
)

LIMITS = ImageLimits(max_bytes=10_000_000, max_pixels=20_000_000)


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


def decode_error(data: bytes, limits: ImageLimits = LIMITS) -> ImageInputError:
    with pytest.raises(ImageInputError) as caught:
        decode_image(data, limits)
    return caught.value


# --- sniffing ------------------------------------------------------------------------------


@pytest.mark.parametrize(("fmt", "expected"), [("JPEG", "jpeg"), ("PNG", "png"), ("WEBP", "webp")])
def test_sniff_recognises_real_files(fmt: str, expected: str) -> None:
    assert sniff_format(array_bytes(gradient(8, 8), fmt)) == expected


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"GIF89a" + b"\x00" * 20,
        b"BM" + b"\x00" * 20,
        b"RIFF\x00\x00\x00\x00WAVEfmt ",
        b"\x89PNG\r\n",  # a PNG signature cut short is not a PNG
        b"<svg xmlns='http://www.w3.org/2000/svg'/>",
    ],
)
def test_sniff_refuses_everything_else(data: bytes) -> None:
    assert sniff_format(data) is None


# --- round trips ----------------------------------------------------------------------------


def test_decodes_png_exactly() -> None:
    pixels = gradient(30, 40)
    decoded = decode_image(array_bytes(pixels, "PNG"), LIMITS)
    assert isinstance(decoded, DecodedImage)
    assert (decoded.format, decoded.width, decoded.height, decoded.had_alpha) == (
        "png",
        40,
        30,
        False,
    )
    assert decoded.pixels.dtype == np.uint8
    np.testing.assert_array_equal(decoded.pixels, pixels)


@pytest.mark.parametrize("channels", [3, 4])
def test_decoded_pixels_are_read_only(channels: int) -> None:
    decoded = decode_image(array_bytes(gradient(4, 4, channels), "PNG"), LIMITS)
    assert decoded.pixels.flags.c_contiguous
    with pytest.raises(ValueError, match="read-only"):
        decoded.pixels[0, 0, 0] = 1
    editable = decoded.pixels.copy()
    editable[0, 0, 0] = 1  # the documented way to edit


def test_decodes_jpeg_close_to_source() -> None:
    pixels = gradient(64, 48)
    data = array_bytes(pixels, "JPEG", quality=95)
    decoded = decode_image(data, LIMITS)
    assert decoded.format == "jpeg"
    assert decoded.pixels.shape == (64, 48, 3)
    assert decoded.bytes_in == len(data)
    assert psnr(decoded.pixels, pixels) > 35


def test_decodes_lossless_webp_exactly() -> None:
    pixels = gradient(20, 33)
    decoded = decode_image(array_bytes(pixels, "WEBP", lossless=True), LIMITS)
    assert decoded.format == "webp"
    np.testing.assert_array_equal(decoded.pixels, pixels)


@pytest.mark.parametrize("fmt", ["PNG", "WEBP"])
def test_rgba_alpha_is_kept(fmt: str) -> None:
    pixels = gradient(16, 24, channels=4)
    decoded = decode_image(array_bytes(pixels, fmt, lossless=True), LIMITS)
    assert decoded.had_alpha
    assert decoded.pixels.shape == (16, 24, 4)
    np.testing.assert_array_equal(decoded.pixels[..., 3], pixels[..., 3])


def test_palette_png_with_trns_keeps_transparency() -> None:
    image = Image.new("P", (4, 2))
    image.putpalette([255, 0, 0, 0, 0, 255] + [0] * 762)
    image.putdata([0, 1, 0, 1, 1, 0, 1, 0])
    decoded = decode_image(pil_bytes(image, "PNG", transparency=1), LIMITS)
    assert decoded.had_alpha
    assert decoded.pixels[0, 0].tolist() == [255, 0, 0, 255]
    assert decoded.pixels[0, 1, 3] == 0  # palette index 1 is the transparent one


def test_orientation_keeps_palette_transparency() -> None:
    # Rotation happens before the mode conversion: the palette and its tRNS must survive it.
    image = Image.new("P", (4, 2))
    image.putpalette([255, 0, 0, 0, 0, 255] + [0] * 762)
    image.putdata([0, 1, 1, 1, 1, 1, 1, 1])  # only the top-left pixel is opaque
    exif = Image.Exif()
    exif[0x0112] = 6
    decoded = decode_image(pil_bytes(image, "PNG", transparency=1, exif=exif), LIMITS)
    assert (decoded.width, decoded.height) == (2, 4)
    # Rotated clockwise for display, the top-left pixel lands at the top right.
    assert decoded.pixels[..., 3].tolist() == [[0, 255], [0, 0], [0, 0], [0, 0]]
    assert decoded.pixels[0, 1].tolist() == [255, 0, 0, 255]


def test_rgb_png_colour_key_becomes_alpha() -> None:
    pixels = np.zeros((2, 2, 3), np.uint8)
    pixels[0, 0] = (10, 20, 30)
    decoded = decode_image(array_bytes(pixels, "PNG", transparency=(10, 20, 30)), LIMITS)
    assert decoded.had_alpha
    assert decoded.pixels[..., 3].tolist() == [[0, 255], [255, 255]]


def test_greyscale_with_alpha_becomes_rgba() -> None:
    image = Image.fromarray(np.array([[[100, 0], [200, 255]]], np.uint8), mode="LA")
    decoded = decode_image(pil_bytes(image, "PNG"), LIMITS)
    assert decoded.pixels.tolist() == [[[100, 100, 100, 0], [200, 200, 200, 255]]]


def test_greyscale_and_one_bit_become_rgb() -> None:
    grey = decode_image(array_bytes(np.array([[0, 128, 255]], np.uint8), "PNG"), LIMITS)
    assert grey.pixels.tolist() == [[[0, 0, 0], [128, 128, 128], [255, 255, 255]]]
    bits = decode_image(pil_bytes(Image.new("1", (3, 1), 1), "PNG"), LIMITS)
    assert bits.pixels.shape == (1, 3, 3)
    assert int(bits.pixels.min()) == 255


def test_sixteen_bit_grey_png_is_scaled_not_clipped() -> None:
    # Pillow's own convert("L") clips 16-bit values to 255: mid-grey would come out white.
    wide = np.array([[0, 257 * 64, 257 * 128, 65535]], np.uint16)
    ok, encoded = cv2.imencode(".png", wide)
    assert ok
    decoded = decode_image(encoded.tobytes(), LIMITS)
    assert decoded.pixels[0, :, 0].tolist() == [0, 64, 128, 255]


def test_sixteen_bit_rgba_png_keeps_alpha() -> None:
    wide = np.zeros((1, 2, 4), np.uint16)  # OpenCV order: B, G, R, A
    wide[0, 0] = (0, 0, 257 * 200, 65535)
    wide[0, 1] = (257 * 50, 0, 0, 257 * 100)
    ok, encoded = cv2.imencode(".png", wide)
    assert ok
    decoded = decode_image(encoded.tobytes(), LIMITS)
    assert decoded.had_alpha
    assert decoded.pixels.tolist() == [[[200, 0, 0, 255], [0, 0, 50, 100]]]


def test_cmyk_jpeg_becomes_rgb() -> None:
    cmyk = Image.new("CMYK", (8, 8), (0, 255, 255, 0))  # no cyan, full magenta+yellow: red
    decoded = decode_image(pil_bytes(cmyk, "JPEG", quality=95), LIMITS)
    assert decoded.pixels.shape == (8, 8, 3)
    red, green, blue = decoded.pixels[4, 4].tolist()
    assert red > 240 and green < 15 and blue < 15


def test_animated_webp_gives_first_frame() -> None:
    frames = [Image.new("RGB", (10, 10), colour) for colour in ((255, 0, 0), (0, 0, 255))]
    data = pil_bytes(frames[0], "WEBP", save_all=True, append_images=frames[1:], lossless=True)
    decoded = decode_image(data, LIMITS)
    assert decoded.pixels[5, 5].tolist() == [255, 0, 0]


# --- EXIF orientation -----------------------------------------------------------------------


def two_colour_landscape() -> Image.Image:
    """40 x 20: left half red, right half blue."""
    image = Image.new("RGB", (40, 20), (255, 0, 0))
    image.paste((0, 0, 255), (20, 0, 40, 20))
    return image


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP"])
@pytest.mark.parametrize(
    ("orientation", "size", "red_at", "blue_at"),
    [
        (1, (40, 20), (10, 5), (10, 35)),  # upright: red left, blue right
        (3, (40, 20), (10, 35), (10, 5)),  # rotated 180: red right
        (6, (20, 40), (5, 10), (35, 10)),  # display rotated 90 clockwise: red on top
        (8, (20, 40), (35, 10), (5, 10)),  # 90 counter-clockwise: red at the bottom
        (2, (40, 20), (10, 35), (10, 5)),  # mirrored: red right
    ],
)
def test_exif_orientation_is_applied(
    fmt: str,
    orientation: int,
    size: tuple[int, int],
    red_at: tuple[int, int],
    blue_at: tuple[int, int],
) -> None:
    exif = Image.Exif()
    exif[0x0112] = orientation
    params = {"quality": 95} if fmt != "PNG" else {}
    decoded = decode_image(pil_bytes(two_colour_landscape(), fmt, exif=exif, **params), LIMITS)
    assert (decoded.width, decoded.height) == size
    assert decoded.pixels[red_at][0] > 200 and decoded.pixels[red_at][2] < 60
    assert decoded.pixels[blue_at][2] > 200 and decoded.pixels[blue_at][0] < 60


@pytest.mark.filterwarnings("ignore:Corrupt EXIF data")
def test_damaged_exif_does_not_refuse_a_good_image() -> None:
    data = pil_bytes(two_colour_landscape(), "JPEG", exif=b"Exif\x00\x00MM\x00*garbage")
    decoded = decode_image(data, LIMITS)
    assert (decoded.width, decoded.height) == (40, 20)


# --- refusals -------------------------------------------------------------------------------


def test_empty_input_is_refused() -> None:
    error = decode_error(b"")
    assert (error.code, error.status_code) == ("EMPTY_INPUT", 400)


def test_byte_limit_is_inclusive() -> None:
    data = array_bytes(gradient(10, 10), "PNG")
    assert decode_image(data, ImageLimits(max_bytes=len(data), max_pixels=100)).width == 10
    error = decode_error(data, ImageLimits(max_bytes=len(data) - 1, max_pixels=100))
    assert (error.code, error.status_code) == ("FILE_TOO_LARGE", 413)


def test_pixel_limit_is_inclusive() -> None:
    data = array_bytes(gradient(10, 11), "PNG")
    assert decode_image(data, ImageLimits(max_bytes=10**6, max_pixels=110)).height == 10
    error = decode_error(data, ImageLimits(max_bytes=10**6, max_pixels=109))
    assert (error.code, error.status_code) == ("TOO_MANY_PIXELS", 422)
    assert "11x10" in error.message


@pytest.mark.parametrize(
    ("image_format", "named"),
    [("GIF", "GIF"), ("BMP", "BMP"), ("TIFF", "TIFF"), ("ICO", "ICO")],
)
def test_other_formats_are_refused_with_the_supported_list(image_format: str, named: str) -> None:
    data = pil_bytes(Image.new("RGB", (8, 8), (1, 2, 3)), image_format)
    error = decode_error(data)
    assert (error.code, error.status_code) == ("INVALID_FORMAT", 415)
    assert named in error.message
    assert "JPEG, PNG and WebP" in error.message


def test_unrecognised_bytes_are_refused() -> None:
    error = decode_error(b"hello, this is not an image")
    assert error.code == "INVALID_FORMAT"
    assert "JPEG, PNG and WebP" in error.message


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP"])
def test_truncated_images_are_refused(fmt: str) -> None:
    rng = np.random.default_rng(3)
    data = array_bytes(rng.integers(0, 256, (128, 128, 3), dtype=np.uint8), fmt)
    error = decode_error(data[: len(data) // 2])
    assert (error.code, error.status_code) == ("CORRUPT_IMAGE", 422)


def test_jpeg_cut_just_before_its_end_marker_is_refused() -> None:
    rng = np.random.default_rng(4)
    data = array_bytes(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8), "JPEG")
    assert decode_error(data[:-200]).code == "CORRUPT_IMAGE"


def test_garbage_after_a_png_signature_is_corrupt_not_unsupported() -> None:
    error = decode_error(b"\x89PNG\r\n\x1a\n" + b"\x00garbage" * 10)
    assert error.code == "CORRUPT_IMAGE"


def test_png_with_damaged_compressed_data_is_refused() -> None:
    data = bytearray(array_bytes(gradient(64, 64), "PNG"))
    idat = data.index(b"IDAT")
    data[idat + 20 : idat + 60] = b"\xff" * 40
    assert decode_error(bytes(data)).code == "CORRUPT_IMAGE"


# --- decompression bombs ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def png_bomb_50k() -> bytes:
    """A valid 50000 x 50000 PNG of a few hundred KB (2.5 gigapixels)."""
    return png_bomb(50_000, 50_000)


def test_png_bomb_is_refused_fast(png_bomb_50k: bytes) -> None:
    assert len(png_bomb_50k) < 1_000_000
    started = time.perf_counter()
    error = decode_error(png_bomb_50k)
    assert time.perf_counter() - started < 1.0
    assert error.code == "TOO_MANY_PIXELS"
    assert "50000x50000" in error.message


def test_png_bomb_is_refused_by_pillows_guard_under_a_generous_limit(png_bomb_50k: bytes) -> None:
    # Our limit would allow it: Pillow's DecompressionBombError must still become our error.
    generous = ImageLimits(max_bytes=10**7, max_pixels=10**12)
    started = time.perf_counter()
    error = decode_error(png_bomb_50k, generous)
    assert time.perf_counter() - started < 1.0
    assert (error.code, error.status_code) == ("TOO_MANY_PIXELS", 422)


def test_pillows_bomb_warning_raised_as_error_becomes_ours() -> None:
    # Where warnings are errors (python -W error), Pillow raises DecompressionBombWarning
    # from Image.open for 89-179 megapixels; it must not escape as an unexpected exception.
    data = png_bomb(10_000, 10_000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        error = decode_error(data, ImageLimits(max_bytes=10**7, max_pixels=10**9))
    assert error.code == "TOO_MANY_PIXELS"


def test_size_is_checked_before_pixel_data_is_read() -> None:
    # A 2000 x 2000 header with its pixel data cut off: an early check says TOO_MANY_PIXELS,
    # a late one would have tried to decode and said CORRUPT_IMAGE.
    ihdr = struct.pack(">IIBBBBB", 2000, 2000, 8, 2, 0, 0, 0)  # 8-bit RGB
    data = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", b"x\x9c")
    assert decode_error(data, ImageLimits(max_bytes=10**7, max_pixels=10**6)).code == (
        "TOO_MANY_PIXELS"
    )


@pytest.mark.parametrize("max_pixels", [20_000_000, 10**12])
def test_jpeg_claiming_a_huge_size_is_refused_fast(max_pixels: int) -> None:
    data = patch_jpeg_size(array_bytes(gradient(16, 16), "JPEG"), 60_000, 60_000)
    started = time.perf_counter()
    error = decode_error(data, ImageLimits(max_bytes=10**7, max_pixels=max_pixels))
    assert time.perf_counter() - started < 1.0
    assert error.code == "TOO_MANY_PIXELS"


@pytest.mark.parametrize("max_pixels", [20_000_000, 10**12])
def test_webp_claiming_a_huge_canvas_is_refused_before_pillow_allocates(max_pixels: int) -> None:
    exif = Image.Exif()
    exif[0x0112] = 1  # an EXIF chunk makes Pillow write the extended (VP8X) layout
    data = patch_webp_canvas(pil_bytes(Image.new("RGB", (16, 16)), "WEBP", exif=exif), 16384, 16384)
    started = time.perf_counter()
    error = decode_error(data, ImageLimits(max_bytes=10**7, max_pixels=max_pixels))
    assert time.perf_counter() - started < 1.0
    assert error.code == "TOO_MANY_PIXELS"


def test_image_limits_must_be_positive() -> None:
    with pytest.raises(ValueError):
        ImageLimits(max_bytes=0, max_pixels=1)
