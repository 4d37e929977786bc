"""Tests for ``pixelmill.imaging.encode``: formats, alpha handling, quality, names."""

from __future__ import annotations

import io

import cv2
import numpy as np
import pytest
from PIL import Image

from pixelmill.imaging import (
    ImageInputError,
    content_type,
    encode_image,
    file_extension,
    flatten_on_white,
    normalize_format,
    sniff_format,
)
from tests.imaging.images import gradient


def read_back(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        return np.asarray(image)


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("png", "png"),
        ("PNG", "png"),
        ("jpg", "jpeg"),
        ("JPG", "jpeg"),
        ("jpeg", "jpeg"),
        ("Jpeg", "jpeg"),
        ("webp", "webp"),
        (" WebP ", "webp"),
        (".jpg", "jpeg"),
    ],
)
def test_normalize_format_accepts_common_spellings(name: str, expected: str) -> None:
    assert normalize_format(name) == expected


@pytest.mark.parametrize("name", ["gif", "bmp", "tiff", "", "pngg", "image/png"])
def test_normalize_format_refuses_others_clearly(name: str) -> None:
    with pytest.raises(ImageInputError) as caught:
        normalize_format(name)
    assert caught.value.code == "UNSUPPORTED_OUTPUT_FORMAT"
    assert caught.value.status_code == 422
    assert "png, jpg (jpeg) or webp" in caught.value.message


def test_content_types_and_extensions() -> None:
    assert [content_type(f) for f in ("png", "jpg", "jpeg", "webp")] == [
        "image/png",
        "image/jpeg",
        "image/jpeg",
        "image/webp",
    ]
    assert [file_extension(f) for f in ("png", "jpeg", "webp")] == ["png", "jpg", "webp"]


@pytest.mark.parametrize("fmt", ["png", "jpeg", "webp"])
def test_output_is_sniffed_as_the_requested_format(fmt: str) -> None:
    assert sniff_format(encode_image(gradient(8, 8), fmt)) == fmt


def test_png_is_lossless_and_keeps_alpha() -> None:
    rgba = gradient(20, 30, channels=4)
    decoded = read_back(encode_image(rgba, "png"))
    np.testing.assert_array_equal(decoded, rgba)


def test_greyscale_arrays_are_accepted() -> None:
    grey = gradient(10, 12)[..., 0]
    np.testing.assert_array_equal(read_back(encode_image(grey, "png")), grey)
    np.testing.assert_array_equal(read_back(encode_image(grey[..., None], "png")), grey)


def test_webp_quality_100_is_lossless_with_exact_alpha() -> None:
    rgba = gradient(20, 30, channels=4)
    rgba[0, 0] = (12, 34, 56, 0)  # colour under full transparency is kept too ("exact")
    np.testing.assert_array_equal(read_back(encode_image(rgba, "webp", quality=100)), rgba)


def test_lossy_webp_keeps_alpha_and_quality_matters() -> None:
    rgba = gradient(64, 64, channels=4)
    high = encode_image(rgba, "webp", quality=95)
    low = encode_image(rgba, "webp", quality=10)
    assert len(low) < len(high)
    decoded = read_back(high)
    assert decoded.shape == (64, 64, 4)
    assert np.abs(decoded[..., 3].astype(int) - rgba[..., 3]).max() <= 2  # alpha is lossless
    assert psnr(decoded[..., :3], rgba[..., :3]) > 30


def test_jpeg_quality_changes_size_and_fidelity() -> None:
    rng = np.random.default_rng(1)
    noisy = gradient(64, 64).astype(int) + rng.integers(-20, 20, (64, 64, 3))
    pixels = np.clip(noisy, 0, 255).astype(np.uint8)
    high, low = encode_image(pixels, "jpeg", quality=95), encode_image(pixels, "jpeg", quality=20)
    assert len(low) < len(high)
    assert psnr(read_back(high), pixels) > psnr(read_back(low), pixels) + 5


def test_jpeg_flattens_semi_transparent_red_onto_white_as_pink() -> None:
    rgba = np.zeros((16, 16, 4), np.uint8)
    rgba[...] = (255, 0, 0, 128)
    decoded = read_back(encode_image(rgba, "jpeg", quality=95))
    assert decoded.shape == (16, 16, 3)
    r, g, b = decoded[8, 8].astype(int).tolist()
    # 255*a + 255*(1-a) = 255 for red; 0*a + 255*(1-a) = 127 for green and blue.
    assert abs(r - 255) <= 2 and abs(g - 127) <= 3 and abs(b - 127) <= 3


def test_jpeg_transparent_pixels_become_white_not_their_hidden_colour() -> None:
    rgba = np.zeros((16, 16, 4), np.uint8)
    rgba[...] = (0, 0, 0, 0)  # black, fully transparent
    decoded = read_back(encode_image(rgba, "jpeg"))
    assert int(decoded.min()) >= 253


def test_flatten_on_white_is_exact_at_the_ends() -> None:
    rgba = np.array([[[10, 20, 30, 255], [10, 20, 30, 0], [0, 0, 0, 51]]], np.uint8)
    assert flatten_on_white(rgba).tolist() == [[[10, 20, 30], [255, 255, 255], [204, 204, 204]]]


def test_non_contiguous_views_encode_correctly() -> None:
    big = gradient(40, 40)
    view = big[::2, 5:25]
    np.testing.assert_array_equal(read_back(encode_image(view, "png")), view)


@pytest.mark.parametrize(
    "pixels",
    [
        np.zeros((4, 4, 3), np.float32),
        np.zeros((4, 4, 2), np.uint8),
        np.zeros((4,), np.uint8),
        np.zeros((0, 4, 3), np.uint8),
    ],
)
def test_arrays_an_engine_should_never_produce_are_rejected(pixels: np.ndarray) -> None:
    with pytest.raises((TypeError, ValueError)):
        encode_image(pixels, "png")


@pytest.mark.parametrize("quality", [0, 101])
def test_quality_out_of_range_is_rejected(quality: int) -> None:
    with pytest.raises(ValueError, match="quality"):
        encode_image(gradient(4, 4), "jpeg", quality=quality)


def test_webp_larger_than_its_format_allows_is_a_clear_error() -> None:
    wide = np.zeros((1, 16_384, 3), np.uint8)
    with pytest.raises(ImageInputError) as caught:
        encode_image(wide, "webp")
    assert caught.value.code == "OUTPUT_TOO_LARGE"
    assert "16383" in caught.value.message
    assert sniff_format(encode_image(wide, "png")) == "png"  # other formats still work


def test_png_with_alpha_is_exact_for_noise_and_odd_sizes() -> None:
    """RGBA goes through fpng: every byte comes back, for PIL and OpenCV alike."""
    rng = np.random.default_rng(5)
    for h, w in ((1, 1), (1, 9), (7, 1), (123, 257)):
        rgba = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
        data = encode_image(rgba, "png")
        np.testing.assert_array_equal(read_back(data), rgba)
        bgra = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
        assert bgra is not None
        np.testing.assert_array_equal(cv2.cvtColor(bgra, cv2.COLOR_BGRA2RGBA), rgba)
