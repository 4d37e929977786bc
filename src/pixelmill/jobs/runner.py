"""Runs a claimed scene job through the registry's ``scenes`` engine, one image at a time: each
planned image is rendered outside any transaction, stored, and then recorded (progress, result,
its captured price) in a short transaction of its own. A run resumes where a previous run of
the same job stopped: scenes depend only on the job's seed, so a resumed job delivers the same
set, each charged once."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from sqlalchemy.orm import Session

from pixelmill.engines.base import EngineError, EngineInputs, MultiImageEngine, PlannedImage
from pixelmill.engines.scenes import ScenesParams
from pixelmill.imaging import DecodedImage, ImageInputError, encode_image
from pixelmill.jobs import service
from pixelmill.jobs.service import Claim, JobBackends, LostClaim
from pixelmill.storage import ObjectStorage

log = logging.getLogger("pixelmill.jobs")

RESULT_FORMAT = "jpeg"
RESULT_QUALITY = 90


@dataclass(frozen=True)
class SceneJobRunner:
    """The body of the ``"jobs.run"`` task, with what it needs: the job backends, the
    registry's scenes engine, the results store, a loader of stored inputs, and the lease and
    output size from the settings."""

    backends: JobBackends
    engine: MultiImageEngine
    results: ObjectStorage
    load_input: Callable[[str], DecodedImage]
    lease_seconds: float
    scene_size: int

    def _write(self, fn: Callable[[Session], object]) -> bool:
        """Run ``fn`` in a transaction of its own; False (rolled back) when the run lost its
        claim."""
        try:
            with self.backends.db.transaction() as session:
                fn(session)
        except LostClaim:
            return False
        return True

    def _finish(self, claim: Claim, error: str | None = None) -> str | None:
        with self.backends.db.transaction() as session:
            return service.finish(session, self.backends, claim, error)

    def _record(self, claim: Claim, item: PlannedImage, key: str, session: Session) -> None:
        service.record_result(session, claim, item.position, item.label, key, self.lease_seconds)

    def run(self, job_id: str) -> str | None:
        """Returns the job's final status, or None when this delivery had nothing to do
        (already claimed, finished, or taken over)."""
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

    def _plan(self, claim: Claim) -> list[PlannedImage]:
        self.engine.load()
        image = self.load_input(claim.input_key)
        params = ScenesParams(
            num_scenes=claim.count, category=claim.category, seed=claim.seed, size=self.scene_size
        )
        return self.engine.plan(EngineInputs(image.pixels), params)

    def _run_claimed(self, claim: Claim) -> str | None:
        lease = self.lease_seconds
        try:
            planned = self._plan(claim)
        except (EngineError, ImageInputError, FileNotFoundError, ValueError) as exc:
            return self._finish(claim, error=f"could not prepare the product: {exc}")

        for item in planned:
            if item.position in claim.done:
                continue
            try:
                data = encode_image(item.render().pixels, RESULT_FORMAT, RESULT_QUALITY)
                key = f"results/{uuid.uuid4().hex}.jpg"
                self.results.put(key, data, "image/jpeg")
            except (EngineError, ValueError, MemoryError, OSError) as exc:
                log.warning("job %s: scene %s failed: %s", claim.job_id, item.label, exc)
                if not self._write(lambda s: service.record_failure(s, claim, lease)):
                    return None
                continue
            recorded = self._write(partial(self._record, claim, item, key))
            if not recorded:
                self.results.delete(key)
                return None
        return self._finish(claim)
