"""The one synchronous path every surface uses:

parse the parameters -> read, decode and validate the input -> reserve the price -> run the
engine in the bounded CPU pool -> encode and store the results -> capture the price and record
history -> the outcome the surface renders.

Each step has its own module: ``params`` (engine lookup, parameters), ``inputs`` (reading and
decoding under the plan's caps), ``accounting`` (reserve, capture or release, history, the stale
reservation sweep) and ``results`` (output format, encode, store, sign). Credits are reserved
only once the parameters and the input are known to be usable (a refused URL, a bad file or a bad
parameter costs nothing) and are released if anything after the reservation fails.

A run for a test key (``User.via_test_key``) takes the same steps but reserves nothing, writes
no ledger entry and no history row, and its images are watermarked "TEST" when stored.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from functools import partial
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel
from sqlalchemy.orm import Session

from pixelmill.config import Settings
from pixelmill.db.base import utcnow
from pixelmill.db.models import User
from pixelmill.db.session import Database
from pixelmill.engines.base import Engine, EngineError, EngineInputs, ImageArray
from pixelmill.errors import AppError, InvalidInput
from pixelmill.imaging import DecodedImage, ImageInputError, OutputFormat
from pixelmill.observability.logs import run_operation
from pixelmill.observability.metrics import OPERATION_DURATION
from pixelmill.observability.tracing import traced
from pixelmill.operations.accounting import Accounting, Charge
from pixelmill.operations.admission import Admission, trim_memory, tune_allocator
from pixelmill.operations.catalog import CATALOG, Operation
from pixelmill.operations.inputs import ImageSource, InputReader, image_error
from pixelmill.operations.params import engine_for, parse_params
from pixelmill.operations.results import (
    Outcome,
    ResultStore,
    StoredImage,
    choose_output_format,
    json_safe,
)
from pixelmill.storage import ObjectStorage, UrlSigner

T = TypeVar("T")

__all__ = ["Delivery", "ImageSource", "Outcome", "Pipeline", "StoredImage", "image_error"]


class Delivery(Protocol):
    """What a caller keeps of a run, paid for atomically: ``prepare`` does the slow part once
    the results are stored (e.g. copy them into the library), ``record`` writes the caller's
    rows in the transaction that captures the credits. Either failing fails the run, and its
    credits are released."""

    async def prepare(self, stored: Sequence[StoredImage]) -> None: ...

    def record(self, session: Session) -> None: ...


class Pipeline:
    """Runs operations. One instance per process, built at startup.

    ``cpu`` is the bounded pool (``PIXELMILL_CPU_WORKERS``) that decodes, runs engines and
    encodes; ``inputs`` reads input images with it (the library uses it too). ``admission`` lets
    as many runs work at once as the pool has workers, queues a bounded number more
    (``PIXELMILL_MAX_QUEUED_REQUESTS``) and refuses the rest with a 503 before their input is
    decoded or anything is reserved."""

    def __init__(
        self,
        settings: Settings,
        db: Database,
        storage: ObjectStorage,
        signer: UrlSigner,
        engines: Mapping[str, Engine],
    ) -> None:
        self.settings = settings
        self.engines = engines
        self.cpu = ThreadPoolExecutor(settings.cpu_workers, thread_name_prefix="engine")
        self.inputs = InputReader(settings, self.cpu)
        self.results = ResultStore(storage, signer, self.cpu)
        self.accounting = Accounting(db, settings.sync_reservation_timeout_seconds)
        tune_allocator(
            mmap_threshold=settings.malloc_mmap_threshold, arena_max=settings.malloc_arena_max
        )
        queued = settings.max_queued_requests
        self.admission = Admission(
            settings.cpu_workers,
            8 * settings.cpu_workers if queued is None else queued,
            settings.max_queue_wait_seconds,
            on_idle=trim_memory,
        )

    def close(self) -> None:
        self.cpu.shutdown(wait=False, cancel_futures=True)

    async def run_free(
        self, fn: Callable[..., T], *args: Any, load: tuple[ImageSource, User | None] | None = None
    ) -> T:
        """Run ``fn(*args)`` (CPU work nobody is charged for: a person check, a gallery draw,
        an analysis) in the CPU pool once admitted, like a charged run; with ``load`` (an
        input and its reader), ``fn`` gets that image's decoded pixels first."""
        async with self.admission.slot():
            if load is not None:
                args = ((await self.inputs.load(*load)).pixels, *args)
            return await asyncio.get_running_loop().run_in_executor(self.cpu, partial(fn, *args))

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
        delivery: Delivery | None = None,
    ) -> Outcome:
        """Run ``operation`` on one input for ``user`` (``None``: anonymous, nothing charged
        nor recorded). Raises :class:`AppError` for every expected failure. ``delivery``
        (only for a user's run) keeps the results in the caller's rows, captured together."""
        if delivery is not None and user is None:
            raise ValueError("a delivery needs a user's run (its rows are captured with it)")
        started = time.perf_counter()
        op = CATALOG[operation]
        engine = engine_for(self.engines, op)
        parsed = parse_params(engine, params)
        # Nothing is decoded, reserved or run before this process has a free place for it: a
        # burst waits in a bounded queue holding only its request bodies, and beyond that bound
        # is refused (503, Retry-After) at once, with nothing charged.
        async with self.admission.slot():
            return await self._run_admitted(
                op,
                engine,
                parsed,
                source,
                user=user,
                surface=surface,
                base_url=base_url,
                output_format=output_format,
                quality=quality,
                extra_inputs=extra_inputs,
                keep_primary_bytes=keep_primary_bytes,
                delivery=delivery,
                started=started,
            )

    async def _run_admitted(
        self,
        op: Operation,
        engine: Engine,
        parsed: BaseModel,
        source: ImageSource | DecodedImage,
        *,
        user: User | None,
        surface: str,
        base_url: str,
        output_format: OutputFormat | None,
        quality: int,
        extra_inputs: Mapping[str, ImageSource] | None,
        keep_primary_bytes: bool,
        delivery: Delivery | None,
        started: float,
    ) -> Outcome:
        decoded = (
            source if isinstance(source, DecodedImage) else await self.inputs.load(source, user)
        )
        extras: dict[str, ImageArray] = {}
        for name, extra in (extra_inputs or {}).items():
            extras[name] = (await self.inputs.load(extra, user)).pixels

        price = op.price(parsed)
        test = user is not None and user.via_test_key
        charge = None
        if user is not None and not test:
            # A run drawn from no input (a guided avatar) records no input size, not 1 x 1.
            width, height = (decoded.width, decoded.height) if decoded.bytes_in else (0, 0)
            charge = Charge(uuid.uuid4().hex, user.id, op.name, surface, price, width, height)
            if price > 0:
                charge = await asyncio.to_thread(self.accounting.reserve, charge)
        try:
            # The reservation's heartbeat is renewed while the engine works and the results are
            # stored, however long that takes; only a dead process stops renewing it.
            async with self.accounting.keep_alive(charge):
                await asyncio.to_thread(engine.load)
                ran = time.perf_counter()
                work = partial(
                    traced,
                    f"engine {engine.name}",
                    run_operation,
                    op.name,
                    engine.run,
                    EngineInputs(decoded.pixels, extras),
                    parsed,
                )
                # In the request's context (its request id and trace) on the pool's thread.
                result = await asyncio.get_running_loop().run_in_executor(
                    self.cpu, contextvars.copy_context().run, work
                )
                OPERATION_DURATION.labels(op.name, engine.name).observe(time.perf_counter() - ran)
                fmt = choose_output_format(op.default_format, decoded, result, output_format)
                stored, primary_bytes = await self.results.store(
                    result, fmt, quality, base_url, watermark=test
                )
                if delivery is not None:
                    await delivery.prepare(stored)
            details = json_safe(result.details)
            remaining = None
            if charge is not None:
                elapsed = time.perf_counter() - started
                primary = stored[0] if stored else None
                remaining = await asyncio.to_thread(
                    self.accounting.complete,
                    charge,
                    elapsed,
                    primary,
                    details,
                    delivery.record if delivery is not None else None,
                )
            elif user is not None:  # a test key's run: nothing to capture
                remaining = await asyncio.to_thread(
                    self.accounting.complete_free,
                    user.id,
                    delivery.record if delivery is not None else None,
                )
        except BaseException as exc:
            if charge is not None:
                # Synchronously: this must happen even if the request task is being cancelled.
                self.accounting.fail(charge, exc)
            error = _caller_error(op, exc)
            if error is None:
                raise
            raise error from exc
        return Outcome(
            processing_id=charge.processing_id if charge else uuid.uuid4().hex,
            operation=op.name,
            credits_used=price if charge is not None else 0,
            credits_remaining=remaining,
            processing_time=round(time.perf_counter() - started, 3),
            input=decoded,
            details=details,
            images=stored,
            primary_bytes=primary_bytes if keep_primary_bytes else None,
            test=test,
        )

    def sweep(self) -> dict[str, int]:
        """Release reservations of synchronous work that died mid-flight, delete expired
        result files. Safe to run concurrently and repeatedly."""
        released = self.accounting.release_stale()
        ttl = timedelta(hours=self.settings.result_ttl_hours)
        removed = self.results.delete_expired(utcnow() - ttl)
        return {"reservations_released": released, "files_removed": removed}


def _caller_error(op: Operation, exc: BaseException) -> AppError | None:
    """The 4xx for a failure after the reservation that the caller's input caused; ``None``
    for anything else (re-raised as it is)."""
    if isinstance(exc, ImageInputError):  # e.g. the result is too large to encode
        return image_error(exc)
    if isinstance(exc, EngineError):
        return InvalidInput(f"{op.name} could not process this image: {exc}")
    if isinstance(exc, MemoryError):
        return AppError(
            "The image is too large to process on this server",
            status_code=413,
            code="TOO_LARGE_TO_PROCESS",
        )
    return None
