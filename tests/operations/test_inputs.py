"""InputReader: the plan caps, the refusals as caller errors, and the bytes kept as sent."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pixelmill.config import Settings
from pixelmill.db.models import User
from pixelmill.errors import AppError
from pixelmill.imaging import ImageInputError
from pixelmill.operations.inputs import (
    ANONYMOUS_MAX_BYTES,
    SUPPORTED_FORMATS,
    ImageSource,
    InputReader,
)
from tests.support.images import encode, jpeg_bytes, png_bytes, product_rgb

MB = 1024 * 1024


@pytest.fixture
def reader(tmp_path: Path) -> Iterator[InputReader]:
    settings = Settings(
        env="testing",
        secret_key="s" * 48,
        database_url=f"sqlite:///{tmp_path}/unused.db",
        data_dir=tmp_path,
        max_upload_bytes=50 * MB,
        max_image_pixels=1_000_000,
    )
    pool = ThreadPoolExecutor(2)
    yield InputReader(settings, pool)
    pool.shutdown()


def test_caps_follow_the_plan_under_the_server_ceiling(reader: InputReader) -> None:
    assert reader.max_bytes_for(None) == ANONYMOUS_MAX_BYTES
    assert reader.max_bytes_for(User(plan="free")) == 5 * MB
    assert reader.max_bytes_for(User(plan="enterprise")) == 50 * MB  # plan allows 100 MB
    assert reader.limits().max_bytes == 50 * MB
    assert reader.limits(1234).max_bytes == 1234
    assert reader.limits().max_pixels == 1_000_000


def test_read_refuses_too_large_and_unknown_formats_as_caller_errors(reader: InputReader) -> None:
    with pytest.raises(AppError) as too_large:
        reader.read(ImageSource("bytes", b"x" * 101), max_bytes=100)
    assert too_large.value.status_code == 413 and too_large.value.code == "FILE_TOO_LARGE"

    bmp = base64.b64encode(encode(product_rgb(8, 8), "BMP")).decode()
    data = reader.read(ImageSource("base64", bmp), max_bytes=MB)  # base64 is only decoded here
    with pytest.raises(ImageInputError):
        reader.decode_stored(data)
    with pytest.raises(AppError) as bad_format:
        asyncio.run(reader.load(ImageSource("base64", bmp), None))
    assert bad_format.value.status_code == 415 and bad_format.value.code == "INVALID_FORMAT"
    assert bad_format.value.details == SUPPORTED_FORMATS == "Supported formats: JPEG, PNG, WebP"


def test_read_and_decode_keeps_the_bytes_as_sent(reader: InputReader) -> None:
    sent = jpeg_bytes(60, 40)
    data, decoded = asyncio.run(reader.read_and_decode(ImageSource("bytes", sent), None))
    assert data == sent
    assert (decoded.width, decoded.height, decoded.format) == (60, 40, "jpeg")
    stored = reader.decode_stored(png_bytes(30, 20))
    assert (stored.width, stored.height, stored.format) == (30, 20, "png")


def test_pixel_cap_applies_to_loaded_inputs(reader: InputReader) -> None:
    with pytest.raises(AppError) as exc:
        asyncio.run(reader.load(ImageSource("bytes", png_bytes(1200, 900)), None))
    assert exc.value.code == "TOO_MANY_PIXELS"
