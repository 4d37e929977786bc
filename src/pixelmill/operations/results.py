"""An operation's results: the output format, the encoded images stored under ``results/``
with a signed URL each (watermarked "TEST" for a test key's run, ``imaging/watermark.py``),
the engine's details made JSON-safe, and the :class:`Outcome` the surfaces render. Results
expire after ``result_ttl_hours``; :meth:`ResultStore.delete_expired` removes them."""

from __future__ import annotations

import asyncio
import uuid
from concurrent.futures import Executor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pixelmill.engines.base import EngineResult, ImageArray
from pixelmill.imaging import (
    DecodedImage,
    OutputFormat,
    content_type,
    encode_image,
    file_extension,
)
from pixelmill.imaging.watermark import add_test_watermark
from pixelmill.storage import ObjectStorage, UrlSigner

RESULTS_PREFIX = "results/"


@dataclass(frozen=True)
class StoredImage:
    """One stored result image and its signed URL."""

    label: str
    key: str
    url: str
    width: int
    height: int
    format: str
    score: float | None = None


@dataclass
class Outcome:
    """What one synchronous run produced, for the surfaces to render."""

    processing_id: str
    operation: str
    credits_used: int
    credits_remaining: int | None
    processing_time: float
    input: DecodedImage
    details: dict[str, Any]
    images: list[StoredImage] = field(default_factory=list)
    primary_bytes: bytes | None = None
    test: bool = False
    """Run for a test key: nothing charged, the images watermarked."""

    @property
    def primary(self) -> StoredImage | None:
        return self.images[0] if self.images else None


def choose_output_format(
    default: Literal["input", "png", "jpeg"],
    decoded: DecodedImage,
    result: EngineResult,
    requested: OutputFormat | None,
) -> OutputFormat:
    """The caller's format if it asked; else the engine's hint; else PNG (WebP for a WebP
    input) when the result has alpha; else the operation's default."""
    if requested:
        return requested
    primary = result.primary
    if primary is not None and primary.preferred_format in ("png", "jpeg", "webp"):
        return primary.preferred_format  # type: ignore[return-value]
    if primary is not None and primary.pixels.shape[2] == 4:
        # Never drop a real alpha channel silently.
        return "webp" if decoded.format == "webp" else "png"
    if default == "input":
        return decoded.format
    return default


def json_safe(value: Any) -> Any:
    """History keeps engine details; numpy scalars and the like become plain JSON values."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if hasattr(value, "item"):
        return value.item()
    return str(value)


class ResultStore:
    """Encodes result images in the CPU pool, stores them and signs their URLs."""

    def __init__(self, storage: ObjectStorage, signer: UrlSigner, cpu: Executor) -> None:
        self.storage = storage
        self.signer = signer
        self.cpu = cpu

    async def store(
        self,
        result: EngineResult,
        fmt: OutputFormat,
        quality: int,
        base_url: str,
        *,
        watermark: bool = False,
    ) -> tuple[list[StoredImage], bytes | None]:
        """Every image of ``result``, stored (each with the "TEST" watermark when
        ``watermark``); and the encoded bytes of the first one."""
        loop = asyncio.get_running_loop()
        stored: list[StoredImage] = []
        primary_bytes: bytes | None = None
        for i, image in enumerate(result.images):
            data = await loop.run_in_executor(
                self.cpu, _encode, image.pixels, fmt, quality, watermark
            )
            key = f"{RESULTS_PREFIX}{uuid.uuid4().hex}.{file_extension(fmt)}"
            await asyncio.to_thread(self.storage.put, key, data, content_type(fmt))
            h, w = image.pixels.shape[:2]
            stored.append(
                StoredImage(
                    label=image.label,
                    key=key,
                    url=base_url.rstrip("/") + self.signer.path_for(key),
                    width=w,
                    height=h,
                    format=fmt,
                    score=image.score,
                )
            )
            if i == 0:
                primary_bytes = data
        return stored, primary_bytes

    def delete_expired(self, older_than: datetime) -> int:
        """Delete stored results written before ``older_than`` (blocking); how many."""
        return self.storage.delete_older_than(older_than)


def _encode(pixels: ImageArray, fmt: OutputFormat, quality: int, watermark: bool) -> bytes:
    return encode_image(add_test_watermark(pixels) if watermark else pixels, fmt, quality)
