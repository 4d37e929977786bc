"""Saving uploaded images for later work (products, job and batch inputs).

Library images live in their own durable store (the wiring's ``library_storage``), apart from
results, which expire after ``result_ttl_hours``. The original bytes are kept as uploaded,
after they decoded and passed the size and pixel limits.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass

from pixelmill.db.models import User
from pixelmill.imaging import DecodedImage
from pixelmill.imaging.encode import content_type, file_extension
from pixelmill.operations.inputs import ImageSource, InputReader
from pixelmill.storage import ObjectStorage, UrlSigner


@dataclass(frozen=True)
class SavedImage:
    key: str
    image: DecodedImage


async def save_image(
    reader: InputReader,
    store: ObjectStorage,
    source: ImageSource,
    user: User,
    folder: str,
    name: str | None = None,
) -> SavedImage:
    """Read (fetching URLs through the SSRF guard), decode, validate and store an input image.
    Raises the input errors (4xx) for unusable input."""
    data, decoded = await reader.read_and_decode(source, user)
    key = f"{folder}/{name or uuid.uuid4().hex}.{file_extension(decoded.format)}"
    await asyncio.to_thread(store.put, key, data, content_type(decoded.format))
    return SavedImage(key, decoded)


def library_url(signer: UrlSigner, base_url: str, key: str) -> str:
    """A signed, expiring absolute URL of a library image."""
    signed = signer.path_for(key)  # /files/<key>?exp=..&sig=..
    return base_url.rstrip("/") + "/files/library/" + signed.removeprefix("/files/")


def load_image(reader: InputReader, store: ObjectStorage, key: str) -> DecodedImage:
    """Decode a stored library image (blocking)."""
    obj = store.get(key)
    if obj is None:
        raise FileNotFoundError(f"stored input {key} is missing")
    return reader.decode_stored(obj.data)
