"""Reading an operation's input image: where it comes from, the plan's size cap, the fetch or
base64 decode (blocking, run in a thread), the decode and validation (in the CPU pool), and the
mapping of the imaging package's refusals onto :class:`~pixelmill.errors.AppError`.

The pipeline reads every synchronous input through :class:`InputReader`; the library uses the
same reader for the uploads it keeps."""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Literal

from pixelmill.accounts.plans import get_plan
from pixelmill.config import Settings
from pixelmill.db.models import User
from pixelmill.errors import AppError, InvalidInput
from pixelmill.imaging import (
    EMPTY_IMAGE,
    SUPPORTED_FORMAT_NAMES,
    DecodedImage,
    FetchPolicy,
    ImageInputError,
    ImageLimits,
    decode_base64_image,
    decode_image,
    fetch_image_url,
    too_large_message,
)

ANONYMOUS_MAX_BYTES = 10 * 1024 * 1024
"""The file-size cap of a caller without an account (the free tools)."""

URL_FETCH_TIMEOUT_S = 20.0
URL_FETCH_MAX_REDIRECTS = 5

SUPPORTED_FORMATS = "Supported formats: " + ", ".join(SUPPORTED_FORMAT_NAMES)
"""The ``details`` of an ``INVALID_FORMAT`` refusal."""


@dataclass(frozen=True)
class ImageSource:
    """Where the input image comes from. Exactly one of the three forms."""

    kind: Literal["bytes", "base64", "url"]
    value: bytes | str

    @staticmethod
    def choose(image_base64: str | None, image_url: str | None) -> ImageSource:
        """The rule for JSON bodies: ``image_base64`` wins when both are given (the caller sent
        the bytes; no network fetch is needed). Neither is a 422."""
        if image_base64:
            return ImageSource("base64", image_base64)
        if image_url:
            return ImageSource("url", image_url)
        if image_base64 is not None:  # an empty file sent as base64: what v1 says of one
            raise image_error(ImageInputError("EMPTY_INPUT", EMPTY_IMAGE))
        raise InvalidInput("Provide image_base64 or image_url")


def image_error(exc: ImageInputError) -> AppError:
    """The caller-facing error for an image refusal: its code, status and message, and the
    supported formats as ``details`` for an unsupported format."""
    details = SUPPORTED_FORMATS if exc.code == "INVALID_FORMAT" else None
    return AppError(str(exc), status_code=exc.status_code, code=exc.code, details=details)


class InputReader:
    """Reads, decodes and validates input images under the settings' and plans' limits.

    ``cpu`` is the bounded pool that decodes (the same one that runs engines)."""

    def __init__(self, settings: Settings, cpu: Executor) -> None:
        self.settings = settings
        self.cpu = cpu

    def max_bytes_for(self, user: User | None) -> int:
        """The largest input this caller may send: the plan's cap (a fixed cap without an
        account), never above the server's ceiling."""
        plan_cap = get_plan(user.plan).max_file_bytes if user else ANONYMOUS_MAX_BYTES
        return min(plan_cap, self.settings.max_upload_bytes)

    def limits(self, max_bytes: int | None = None) -> ImageLimits:
        """Decode limits: ``max_bytes`` (default: the server's ceiling) and the pixel cap."""
        return ImageLimits(
            max_bytes=self.settings.max_upload_bytes if max_bytes is None else max_bytes,
            max_pixels=self.settings.max_image_pixels,
        )

    def read(self, source: ImageSource, max_bytes: int) -> bytes:
        """The raw bytes of an input (blocking: fetches URLs through the SSRF guard). Raises
        :class:`AppError` for an input we cannot use."""
        try:
            if source.kind == "bytes":
                assert isinstance(source.value, bytes)
                if len(source.value) > max_bytes:
                    raise ImageInputError(
                        "FILE_TOO_LARGE", too_large_message(len(source.value), max_bytes)
                    )
                return source.value
            assert isinstance(source.value, str)
            if source.kind == "base64":
                return decode_base64_image(source.value, max_bytes)
            return fetch_image_url(source.value, self._fetch_policy(max_bytes))
        except ImageInputError as exc:
            raise image_error(exc) from exc

    async def load(self, source: ImageSource, user: User | None) -> DecodedImage:
        """Read the input in a thread and decode it in the CPU pool, under ``user``'s caps."""
        _, decoded = await self.read_and_decode(source, user)
        return decoded

    async def read_and_decode(
        self, source: ImageSource, user: User | None
    ) -> tuple[bytes, DecodedImage]:
        """As :meth:`load`, and also the bytes as sent (the library keeps uploads unchanged)."""
        max_bytes = self.max_bytes_for(user)
        data = await asyncio.to_thread(self.read, source, max_bytes)
        loop = asyncio.get_running_loop()
        try:
            decoded = await loop.run_in_executor(
                self.cpu, decode_image, data, self.limits(max_bytes)
            )
        except ImageInputError as exc:
            raise image_error(exc) from exc
        return data, decoded

    def decode_stored(self, data: bytes) -> DecodedImage:
        """Decode an upload kept earlier (blocking), under the server's limits. Raises
        :class:`~pixelmill.imaging.ImageInputError` as :func:`~pixelmill.imaging.decode_image`
        does."""
        return decode_image(data, self.limits())

    def _fetch_policy(self, max_bytes: int) -> FetchPolicy:
        return FetchPolicy(
            allow_loopback=self.settings.allow_loopback_urls,
            max_bytes=max_bytes,
            timeout_s=URL_FETCH_TIMEOUT_S,
            max_redirects=URL_FETCH_MAX_REDIRECTS,
        )
