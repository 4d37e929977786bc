"""Runs a claimed job, one output at a time: the job's kind plans the outputs (images through
the registry's engine, or files such as a video), each planned output is rendered outside any
transaction (an image or video of a test job watermarked "TEST", ``imaging/watermark.py``),
stored, and then recorded (progress, result, its captured price, whatever else the kind
records) in a short transaction of its own. A run resumes where a previous run of the same
job stopped: a plan depends only on the job's parameters and seed, so a resumed job delivers
the same set, each output charged once.

A run watches its job while it works: when the row stops being this run's (a cancel moved it to
``failed``, or the sweeper handed it to another run) the run's cancel token fires, which aborts
a provider call in flight (``providers.http.cancel_scope``: a Replicate prediction or ComfyUI
prompt is cancelled at the provider, an OpenAI request's connection closed) and the run stops
before its next output."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Protocol

from sqlalchemy.orm import Session

from pixelmill.cancel import CancelToken, cancel_scope, cancelled_by
from pixelmill.engines.base import (
    EngineError,
    OutputFile,
    OutputImage,
    Planned,
)
from pixelmill.engines.product_photo.engine import DELIVERED_AS
from pixelmill.engines.video.encode import EncodeError, redraw_mp4
from pixelmill.imaging import (
    ImageInputError,
    content_type,
    encode_image,
    file_extension,
)
from pixelmill.imaging.watermark import add_test_watermark
from pixelmill.jobs import service
from pixelmill.jobs.service import Claim, JobBackends, LostClaim
from pixelmill.observability.logs import job_context, run_operation
from pixelmill.observability.metrics import OPERATION_DURATION
from pixelmill.observability.tracing import traced, tracer
from pixelmill.storage import ObjectStorage

log = logging.getLogger("pixelmill.jobs")

RESULT_QUALITY = 90
PREPARE_ERRORS = (EngineError, ImageInputError, FileNotFoundError, ValueError)


def mark_test_output(output: OutputImage | OutputFile) -> OutputImage | OutputFile:
    """``output`` as a test job delivers it: an image's pixels and every frame of an MP4 carry
    the "TEST" watermark (``imaging/watermark.py``; the MP4 encoded again as the video engine
    encodes, its audio copied); a file without pictures (a JSON document) is returned as it
    is. Raises ``ValueError`` for a picture file it cannot mark: that output fails (a test job
    costs nothing) rather than being delivered unmarked."""
    if isinstance(output, OutputImage):
        return replace(output, pixels=add_test_watermark(output.pixels))
    kind = output.content_type.split(";", 1)[0].strip().lower()
    if kind == "video/mp4":
        try:
            return replace(output, content=redraw_mp4(output.content, add_test_watermark))
        except EncodeError as exc:
            raise ValueError(f"the video could not be watermarked: {exc}") from exc
    if kind.startswith(("image/", "video/")):
        raise ValueError(f"a test key's {kind} output cannot be watermarked")
    return output


def failure_reason(exc: BaseException) -> str:
    """An output's failure as its job's ``failures`` show it: the engine's own sentence (an
    :class:`EngineError` or ``ValueError`` says what went wrong in words), or what kind of
    trouble it was (memory, storage) without internals."""
    if isinstance(exc, MemoryError):
        return "the server ran out of memory while rendering this output"
    if isinstance(exc, OSError) and not isinstance(exc, EngineError | ValueError):
        return f"the output could not be stored or read ({type(exc).__name__})"
    return str(exc).strip() or type(exc).__name__


@dataclass(frozen=True)
class Rendered:
    """One delivered output: its place in the plan, what was rendered and its stored copy
    (``data``: the stored bytes; ``price``: what delivering it captures)."""

    position: int
    label: str
    output: OutputImage | OutputFile
    key: str
    data: bytes
    price: int | None = None


class JobKind(Protocol):
    """What differs between kinds of job (``jobs.kind``)."""

    @property
    def result_format(self) -> str:
        """``jpeg`` or ``png`` for planned images (``png`` where transparency or exact pixels
        matter); planned files carry their own type."""
        ...

    @property
    def subject(self) -> str:
        """What the job works on, for error messages ("could not prepare the product: ...")."""
        ...

    def plan(self, claim: Claim) -> Sequence[Planned]:
        """The job's outputs, from its parameters (blocking; loads inputs and models). Raises
        ``EngineError``/``ValueError``/``FileNotFoundError`` for input the job cannot use."""
        ...

    def record(self, session: Session, claim: Claim, rendered: Rendered) -> None:
        """Extra rows for a delivered image, in the transaction that records it."""
        ...


@dataclass(frozen=True)
class JobRunner:
    """The body of the ``"jobs.run"`` task: the job backends, one :class:`JobKind` per job
    kind, the results store and the lease from the settings."""

    backends: JobBackends
    kinds: Mapping[str, JobKind]
    results: ObjectStorage
    lease_seconds: float
    cancel_check_seconds: float = 1.0
    """How often a run reads whether its job is still its own (a cancel stops the run and
    its provider call within about this long)."""

    def run(self, job_id: str) -> str | None:
        """Returns the job's final status, or None when this delivery had nothing to do
        (already claimed, finished, or taken over)."""
        with job_context(job_id), tracer.start_as_current_span("job", attributes={"job": job_id}):
            status = self._run(job_id)
            if status is not None:
                log.info("job %s %s", job_id, status)
            return status

    def _run(self, job_id: str) -> str | None:
        with self.backends.db.transaction() as session:
            claim = service.claim(session, job_id, self.lease_seconds)
        if claim is None:
            return None
        try:
            return self._run_claimed(claim)
        except Exception as exc:
            # A bug, not the input's fault: end the job now (credits back) rather than let the
            # sweeper retry something that will fail again.
            log.exception("job %s crashed", job_id)
            return self._finish(claim, error=f"internal error ({type(exc).__name__})")

    def _write(self, fn: Callable[[Session], object]) -> bool:
        """Run ``fn`` in a transaction of its own; False (rolled back) when the run lost its
        claim."""
        try:
            with self.backends.db.transaction() as session:
                fn(session)
        except LostClaim:
            return False
        return True

    def _finish(
        self, claim: Claim, error: str | None = None, reason: str | None = None
    ) -> str | None:
        with self.backends.db.transaction() as session:
            return service.finish(session, self.backends, claim, error, reason=reason)

    def _render(self, kind: JobKind, item: Planned, claim: Claim) -> Rendered:
        started = time.perf_counter()
        output: OutputImage | OutputFile = traced(
            f"render {claim.kind}", run_operation, claim.kind, item.render
        )
        self._observe(kind, claim, started)
        if claim.test:  # every output, and what the kind records of it (a saved avatar)
            output = mark_test_output(output)
        # An output its engine tried again another way names what it delivered.
        label = str(output.data.get(DELIVERED_AS) or item.label)
        if isinstance(output, OutputFile):
            key = f"results/{uuid.uuid4().hex}.{output.extension}"
            self.results.put(key, output.content, output.content_type)
            return Rendered(item.position, label, output, key, output.content, item.price)
        fmt = kind.result_format
        data = encode_image(output.pixels, fmt, RESULT_QUALITY)
        key = f"results/{uuid.uuid4().hex}.{file_extension(fmt)}"
        self.results.put(key, data, content_type(fmt))
        return Rendered(item.position, label, output, key, data, item.price)

    @staticmethod
    def _observe(kind: JobKind, claim: Claim, started: float) -> None:
        """One output's render time in ``pixelmill_operation_duration_seconds``, under the
        job's kind and the kind's engine (when it has one)."""
        engine = getattr(getattr(kind, "engine", None), "name", None) or claim.kind
        OPERATION_DURATION.labels(claim.kind, str(engine)).observe(time.perf_counter() - started)

    @contextmanager
    def _heartbeat(self, claim: Claim) -> Iterator[CancelToken]:
        """Renew the claim's lease every quarter lease while the body runs, so a live run
        keeps its job however long one output takes, and a dead one (its process killed)
        lets the lease run out. Between renewals, every ``cancel_check_seconds``, read
        whether the job is still this run's. The token is cancelled when the run lost its
        claim (the job was cancelled or taken over)."""
        stop, lost = threading.Event(), CancelToken()
        quarter = self.lease_seconds / 4
        tick = max(0.05, min(self.cancel_check_seconds, quarter))

        def still_owned(renew: bool) -> bool:
            if renew:
                return self._write(lambda s: service.heartbeat(s, claim, self.lease_seconds))
            with self.backends.db.read() as session:
                return service.owns(session, claim)

        def beat() -> None:
            renew_at = time.monotonic() + quarter
            while not stop.wait(tick):
                renew = time.monotonic() >= renew_at

                try:
                    owned = still_owned(renew)
                except Exception:  # a database hiccup: the next tick tries again
                    log.warning("job %s: heartbeat failed", claim.job_id, exc_info=True)
                    continue
                if renew:
                    renew_at = time.monotonic() + quarter
                if not owned:
                    log.info("job %s: no longer this run's (cancelled or taken over)", claim.job_id)
                    lost.cancel()
                    return

        thread = threading.Thread(target=beat, name=f"heartbeat-{claim.job_id}", daemon=True)
        thread.start()
        try:
            yield lost
        finally:
            stop.set()
            thread.join()

    def _run_claimed(self, claim: Claim) -> str | None:
        with self._heartbeat(claim) as lost, cancel_scope(lost):
            return self._run_kind(claim, lost)

    def _run_kind(self, claim: Claim, lost: CancelToken) -> str | None:
        kind = self.kinds.get(claim.kind)
        if kind is None:
            return self._finish(claim, error=f"jobs of kind {claim.kind!r} cannot run here")
        try:
            planned = kind.plan(claim)
        except Exception as exc:
            if lost.cancelled or cancelled_by(exc):
                return None
            if not isinstance(exc, PREPARE_ERRORS):
                raise
            return self._finish(claim, error=f"could not prepare the {kind.subject}: {exc}")

        lease = self.lease_seconds
        last_failure: str | None = None
        for item in planned:
            if item.position in claim.done:
                continue
            if lost.cancelled:
                return None  # cancelled: whoever cancelled settled the job
            try:
                rendered = self._render(kind, item, claim)
            except Exception as exc:
                if lost.cancelled or cancelled_by(exc):
                    # The job was cancelled (whoever cancelled it settled it), or the server
                    # is stopping (the lease runs out and the sweeper hands the job again).
                    log.info("job %s: %s stopped: cancelled", claim.job_id, item.label)
                    return None
                if not isinstance(exc, EngineError | ValueError | MemoryError | OSError):
                    raise
                log.warning("job %s: %s failed: %s", claim.job_id, item.label, exc)
                last_failure = failure_reason(exc)

                def failed(session: Session, item: Planned = item, why: str = last_failure) -> None:
                    service.record_failure(session, claim, lease, item.position, why)

                if not self._write(failed):
                    return None
                continue

            def record(session: Session, rendered: Rendered = rendered) -> None:
                service.record_result(
                    session,
                    claim,
                    rendered.position,
                    rendered.label,
                    rendered.key,
                    lease,
                    price=rendered.price,
                )
                usage = rendered.output.data.get("usage")
                if isinstance(usage, dict):
                    service.add_usage(session, claim.job_id, rendered.position, usage)
                kind.record(session, claim, rendered)

            if not self._write(record):
                self.results.delete(rendered.key)
                return None
        return self._finish(claim, reason=last_failure)
