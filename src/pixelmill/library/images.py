"""Saving uploaded images for later work (products, job and batch inputs).

Library images live in their own durable store (``Resources.library_storage``), apart from
results, which expire after ``result_ttl_hours``. The original bytes are kept as uploaded,
after they decoded and passed the size and pixel limits.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pixelmill.db.models import User
from pixelmill.imaging import DecodedImage, ImageInputError, ImageLimits, decode_image
from pixelmill.imaging.encode import content_type
from pixelmill.operations.pipeline import ImageSource, image_error

if TYPE_CHECKING:
    from pixelmill.resources import Resources

_EXT = {"png": "png", "jpeg": "jpg", "webp": "webp"}


@dataclass(frozen=True)
class SavedImage:
    key: str
    image: DecodedImage


def limits(resources: Resources, max_bytes: int | None = None) -> ImageLimits:
    return ImageLimits(
        max_bytes=max_bytes or resources.settings.max_upload_bytes,
        max_pixels=resources.settings.max_image_pixels,
    )


async def save_image(
    resources: Resources, source: ImageSource, user: User, folder: str, name: str | None = None
) -> SavedImage:
    """Read (fetching URLs through the SSRF guard), decode, validate and store an input image.
    Raises the pipeline's image errors (4xx) for unusable input."""
    pipeline = resources.pipeline
    max_bytes = pipeline.max_bytes_for(user)
    data = await asyncio.to_thread(pipeline.read_source, source, max_bytes)
    try:
        decoded = await asyncio.get_running_loop().run_in_executor(
            pipeline.cpu, decode_image, data, limits(resources, max_bytes)
        )
    except ImageInputError as exc:
        raise image_error(exc) from exc
    key = f"{folder}/{name or uuid.uuid4().hex}.{_EXT[decoded.format]}"
    await asyncio.to_thread(resources.library_storage.put, key, data, content_type(decoded.format))
    return SavedImage(key, decoded)


def library_url(resources: Resources, base_url: str, key: str) -> str:
    """A signed, expiring absolute URL of a library image."""
    signed = resources.signer.path_for(key)  # /files/<key>?exp=..&sig=..
    return base_url.rstrip("/") + "/files/library/" + signed.removeprefix("/files/")


def load_image(resources: Resources, key: str) -> DecodedImage:
    """Decode a stored library image (blocking)."""
    obj = resources.library_storage.get(key)
    if obj is None:
        raise FileNotFoundError(f"stored input {key} is missing")
    return decode_image(obj.data, limits(resources))
