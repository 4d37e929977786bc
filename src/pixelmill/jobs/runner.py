"""Runs a claimed scene job, one scene at a time: each scene is rendered outside any
transaction, stored, and then recorded (progress, result, one captured credit) in a short
transaction of its own. A run resumes where a previous run of the same job stopped: scenes
depend only on the job's seed, so a resumed job delivers the same set, each charged once."""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING

from pixelmill.engines.base import EngineError
from pixelmill.engines.scenes.catalogue import choose_scenes, normalise_category, render_scene
from pixelmill.engines.scenes.engine import ScenesEngine, prepare_cutout
from pixelmill.imaging import ImageInputError, encode_image
from pixelmill.jobs import service
from pixelmill.library.images import load_image

if TYPE_CHECKING:
    from pixelmill.resources import Resources

log = logging.getLogger("pixelmill.jobs")

RESULT_FORMAT = "jpeg"
RESULT_QUALITY = 90


def run_job(resources: Resources, job_id: str) -> str | None:
    """The body of the ``"jobs.run"`` task. Returns the job's final status, or None when this
    delivery had nothing to do (already claimed, finished, or taken over)."""
    settings = resources.settings
    lease = float(settings.job_lease_seconds)
    claim = service.claim(resources.db, job_id, lease)
    if claim is None:
        return None
    try:
        return _run_claimed(resources, claim, lease)
    except Exception as exc:
        # A bug, not the input's fault: end the job now (credits back) rather than let the
        # sweeper retry something that will fail again.
        log.exception("job %s crashed", job_id)
        return service.finish(resources, claim, error=f"internal error ({type(exc).__name__})")


def _run_claimed(resources: Resources, claim: service.Claim, lease: float) -> str | None:
    settings = resources.settings
    job_id = claim.job_id
    try:
        ScenesEngine().load()
        image = load_image(resources, claim.input_key)
        cutout, _how = prepare_cutout(image.pixels)
        names = choose_scenes(normalise_category(claim.category), claim.count, claim.seed)
    except (EngineError, ImageInputError, FileNotFoundError, ValueError) as exc:
        return service.finish(resources, claim, error=f"could not prepare the product: {exc}")

    for position, name in enumerate(names):
        if position in claim.done:
            continue
        try:
            pixels = render_scene(cutout, name, claim.seed, settings.scene_size)
            data = encode_image(pixels, RESULT_FORMAT, RESULT_QUALITY)
            key = f"results/{uuid.uuid4().hex}.jpg"
            resources.storage.put(key, data, "image/jpeg")
        except (EngineError, ValueError, MemoryError, OSError) as exc:
            log.warning("job %s: scene %s failed: %s", job_id, name, exc)
            if not service.record_failure(resources.db, claim, lease):
                return None
            continue
        if not service.record_result(resources.db, claim, position, name, key, lease):
            resources.storage.delete(key)
            return None
    return service.finish(resources, claim)
