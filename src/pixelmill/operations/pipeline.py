"""The one synchronous path every surface uses:

read input -> decode and validate -> reserve credits -> run the engine in the bounded CPU pool
-> encode and store results -> capture credits and record history -> outcome for the surface.

Credits are reserved only after the input is known to be usable (a refused URL, a bad file or a
bad parameter costs nothing) and are released if anything after the reservation fails. The
database is never held across the engine run: reservation and capture are separate short
transactions; a process that dies in between leaves a held reservation that the maintenance
sweeper releases.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from pixelmill.accounts.plans import get_plan
from pixelmill.config import Settings
from pixelmill.credits import ledger
from pixelmill.db.base import utcnow
from pixelmill.db.models import ProcessingRecord, User
from pixelmill.db.session import Database
from pixelmill.engines.base import Engine, EngineError, EngineInputs, EngineResult, ImageArray
from pixelmill.errors import AppError, InvalidInput, NotFound
from pixelmill.imaging import (
    DecodedImage,
    FetchPolicy,
    ImageInputError,
    ImageLimits,
    content_type,
    decode_base64_image,
    decode_image,
    encode_image,
    fetch_image_url,
    file_extension,
)
from pixelmill.operations.catalog import CATALOG, Operation, OutputFormat
from pixelmill.storage import ObjectStorage, UrlSigner

log = logging.getLogger("pixelmill.pipeline")
T = TypeVar("T")

ANONYMOUS_MAX_BYTES = 10 * 1024 * 1024


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
        raise InvalidInput("Provide image_base64 or image_url")


@dataclass(frozen=True)
class StoredImage:
    label: str
    key: str
    url: str
    width: int
    height: int
    format: str
    score: float | None = None


@dataclass
class Outcome:
    processing_id: str
    operation: str
    credits_used: int
    credits_remaining: int | None
    processing_time: float
    input: DecodedImage
    details: dict[str, Any]
    images: list[StoredImage] = field(default_factory=list)
    primary_bytes: bytes | None = None

    @property
    def primary(self) -> StoredImage | None:
        return self.images[0] if self.images else None


SUPPORTED_FORMATS = "Supported formats: JPEG, PNG, WebP"


def image_error(exc: ImageInputError) -> AppError:
    details = SUPPORTED_FORMATS if exc.code == "INVALID_FORMAT" else None
    return AppError(str(exc), status_code=exc.status_code, code=exc.code, details=details)


class Pipeline:
    """Runs operations. One instance per process, built at startup."""

    def __init__(
        self,
        settings: Settings,
        db: Database,
        storage: ObjectStorage,
        signer: UrlSigner,
        engines: Mapping[str, Engine],
    ) -> None:
        self.settings = settings
        self.db = db
        self.storage = storage
        self.signer = signer
        self.engines = engines
        self.cpu = ThreadPoolExecutor(settings.cpu_workers, thread_name_prefix="engine")

    def close(self) -> None:
        self.cpu.shutdown(wait=False, cancel_futures=True)

    async def _cpu(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.cpu, fn, *args)

    # ---- inputs -------------------------------------------------------------------------

    def max_bytes_for(self, user: User | None) -> int:
        plan_cap = get_plan(user.plan).max_file_bytes if user else ANONYMOUS_MAX_BYTES
        return min(plan_cap, self.settings.max_upload_bytes)

    def fetch_policy(self, max_bytes: int) -> FetchPolicy:
        return FetchPolicy(
            allow_loopback=self.settings.allow_loopback_urls,
            max_bytes=max_bytes,
            timeout_s=20.0,
            max_redirects=5,
        )

    def read_source(self, source: ImageSource, max_bytes: int) -> bytes:
        """The raw bytes of an input (blocking: fetches URLs). Raises AppError for bad input."""
        try:
            if source.kind == "bytes":
                assert isinstance(source.value, bytes)
                if len(source.value) > max_bytes:
                    raise AppError(
                        f"File too large: {len(source.value) / 1e6:.1f} MB; this plan accepts up "
                        f"to {max_bytes // (1024 * 1024)} MB",
                        status_code=413,
                        code="FILE_TOO_LARGE",
                    )
                return source.value
            assert isinstance(source.value, str)
            if source.kind == "base64":
                return decode_base64_image(source.value, max_bytes)
            return fetch_image_url(source.value, self.fetch_policy(max_bytes))
        except ImageInputError as exc:
            raise image_error(exc) from exc

    async def load_image(self, source: ImageSource, user: User | None) -> DecodedImage:
        max_bytes = self.max_bytes_for(user)
        data = await asyncio.to_thread(self.read_source, source, max_bytes)
        limits = ImageLimits(max_bytes=max_bytes, max_pixels=self.settings.max_image_pixels)
        try:
            return await self._cpu(decode_image, data, limits)
        except ImageInputError as exc:
            raise image_error(exc) from exc

    # ---- running ------------------------------------------------------------------------

    def engine_for(self, op: Operation) -> Engine:
        engine = self.engines.get(op.engine)
        if engine is None:
            raise NotFound(f"Operation {op.name} is not available on this server")
        return engine

    def parse_params(self, op: Operation, raw: Mapping[str, Any]) -> BaseModel:
        engine = self.engine_for(op)
        try:
            params = engine.Params.model_validate(dict(raw))
        except ValidationError as exc:
            msg = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()
            )
            raise InvalidInput(f"Invalid parameters: {msg}") from exc
        validate = getattr(engine, "validate", None)
        if callable(validate):
            try:
                validate(params)
            except EngineError as exc:
                raise InvalidInput(str(exc)) from exc
        return params

    async def run(
        self,
        operation: str,
        source: ImageSource | DecodedImage,
        params: Mapping[str, Any],
        *,
        user: User | None,
        surface: str,
        base_url: str,
        output_format: OutputFormat | None = None,
        quality: int = 95,
        extra_inputs: Mapping[str, ImageSource] | None = None,
        keep_primary_bytes: bool = False,
    ) -> Outcome:
        started = time.perf_counter()
        op = CATALOG[operation]
        engine = self.engine_for(op)
        parsed = self.parse_params(op, params)
        decoded = (
            source if isinstance(source, DecodedImage) else await self.load_image(source, user)
        )
        extras: dict[str, ImageArray] = {}
        for name, extra in (extra_inputs or {}).items():
            extras[name] = (await self.load_image(extra, user)).pixels

        price = op.price(parsed)
        reservation = None
        if user is not None and price > 0:
            reservation = await asyncio.to_thread(self._reserve, user.id, price, op.name)
        processing_id = uuid.uuid4().hex
        try:
            await asyncio.to_thread(engine.load)
            result: EngineResult = await self._cpu(
                engine.run, EngineInputs(decoded.pixels, extras), parsed
            )
            fmt = self._output_format(op, decoded, result, output_format)
            stored, primary_bytes = await self._store(result, fmt, quality, base_url)
            details = _json_safe(result.details)
            elapsed = time.perf_counter() - started
            remaining = None
            if user is not None:
                remaining = await asyncio.to_thread(
                    self._finish,
                    user.id,
                    reservation.id if reservation else None,
                    price,
                    processing_id,
                    op,
                    surface,
                    elapsed,
                    decoded,
                    stored,
                    details,
                )
        except BaseException as exc:
            if reservation is not None:
                # Synchronously: this must happen even if the request task is being cancelled.
                self._release_failed(
                    user.id if user else 0, reservation.id, processing_id, op, surface, decoded, exc
                )
            if isinstance(exc, ImageInputError):  # e.g. the result is too large to encode
                raise image_error(exc) from exc
            if isinstance(exc, EngineError):
                raise InvalidInput(f"{op.name} could not process this image: {exc}") from exc
            if isinstance(exc, MemoryError):
                raise AppError(
                    "The image is too large to process on this server",
                    status_code=413,
                    code="TOO_LARGE_TO_PROCESS",
                ) from exc
            raise
        return Outcome(
            processing_id=processing_id,
            operation=op.name,
            credits_used=price if user is not None else 0,
            credits_remaining=remaining,
            processing_time=round(time.perf_counter() - started, 3),
            input=decoded,
            details=details,
            images=stored,
            primary_bytes=primary_bytes if keep_primary_bytes else None,
        )

    # ---- steps --------------------------------------------------------------------------

    def _output_format(
        self,
        op: Operation,
        decoded: DecodedImage,
        result: EngineResult,
        requested: OutputFormat | None,
    ) -> OutputFormat:
        if requested:
            return requested
        primary = result.primary
        if primary is not None and primary.preferred_format in ("png", "jpeg", "webp"):
            return primary.preferred_format  # type: ignore[return-value]
        if primary is not None and primary.pixels.shape[2] == 4:
            # Never drop a real alpha channel silently.
            return "webp" if decoded.format == "webp" else "png"
        if op.default_format == "input":
            return decoded.format
        return op.default_format

    async def _store(
        self, result: EngineResult, fmt: OutputFormat, quality: int, base_url: str
    ) -> tuple[list[StoredImage], bytes | None]:
        stored: list[StoredImage] = []
        primary_bytes: bytes | None = None
        for i, image in enumerate(result.images):
            data = await self._cpu(encode_image, image.pixels, fmt, quality)
            key = f"results/{uuid.uuid4().hex}.{file_extension(fmt)}"
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

    def _reserve(self, user_id: int, price: int, purpose: str) -> ledger.Reservation:
        with self.db.transaction() as session:
            return ledger.reserve(session, user_id, price, f"sync:{purpose}")

    def _finish(
        self,
        user_id: int,
        reservation_id: str | None,
        price: int,
        processing_id: str,
        op: Operation,
        surface: str,
        elapsed: float,
        decoded: DecodedImage,
        stored: list[StoredImage],
        details: dict[str, Any],
    ) -> int:
        """Capture the credits and record the history row in one transaction."""
        with self.db.transaction() as session:
            if reservation_id is not None:
                ledger.settle(session, reservation_id, price)
            primary = stored[0] if stored else None
            session.add(
                ProcessingRecord(
                    id=processing_id,
                    user_id=user_id,
                    operation=op.name,
                    surface=surface,
                    status="completed",
                    credits_used=price,
                    processing_time=round(elapsed, 3),
                    input_width=decoded.width,
                    input_height=decoded.height,
                    result_key=primary.key if primary else None,
                    result_format=primary.format if primary else None,
                    details=details,
                )
            )
            return ledger.balance(session, user_id)

    def _release_failed(
        self,
        user_id: int,
        reservation_id: str,
        processing_id: str,
        op: Operation,
        surface: str,
        decoded: DecodedImage,
        exc: BaseException,
    ) -> None:
        try:
            with self.db.transaction() as session:
                ledger.release(session, reservation_id)
                session.add(
                    ProcessingRecord(
                        id=processing_id,
                        user_id=user_id,
                        operation=op.name,
                        surface=surface,
                        status="failed",
                        credits_used=0,
                        input_width=decoded.width,
                        input_height=decoded.height,
                        error=str(exc)[:500] or type(exc).__name__,
                        details={},
                    )
                )
        except Exception:
            # The sweeper releases stale holds; log so an operator can see why.
            log.exception("could not release reservation %s", reservation_id)

    # ---- maintenance --------------------------------------------------------------------

    def sweep(self) -> dict[str, int]:
        """Release reservations of synchronous work that died mid-flight, delete expired
        result files. Safe to run concurrently and repeatedly."""
        ttl = timedelta(hours=self.settings.result_ttl_hours)
        with self.db.transaction() as session:
            released = ledger.release_stale(session, utcnow() - timedelta(minutes=30))
        removed = self.storage.delete_older_than(utcnow() - ttl)
        return {"reservations_released": released, "files_removed": removed}


def _json_safe(value: Any) -> Any:
    """History keeps engine details; numpy scalars and the like become plain JSON values."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if hasattr(value, "item"):
        return value.item()
    return str(value)
