"""The ``scenes`` job kind: the product placed in the registry's ``scenes`` engine's scenes, at
the catalog's price. A single job (``POST /api/v2/jobs``, ``/api/v2/generate/scenes...``) or
the items of a batch (:mod:`pixelmill.jobs.batches`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.orm import Session

from pixelmill.db.models import Job
from pixelmill.engines.base import EngineInputs, MultiImageEngine, PlannedImage
from pixelmill.engines.scenes import ScenesParams
from pixelmill.imaging import DecodedImage
from pixelmill.jobs import service as jobs
from pixelmill.jobs.runner import Rendered
from pixelmill.jobs.service import Claim, JobBackends
from pixelmill.operations.catalog import CATALOG

SCENES_KIND = "scenes"


def scene_price(count: int) -> int:
    """What ``count`` scenes cost: the catalog's price of the ``scenes`` operation."""
    return CATALOG[SCENES_KIND].price(ScenesParams(num_scenes=count))


def create_scene_job(
    session: Session,
    backends: JobBackends,
    *,
    user_id: int,
    input_key: str,
    count: int,
    category: str,
    base_url: str,
    product_id: str | None = None,
    webhook_url: str | None = None,
    test: bool,
) -> tuple[Job, int]:
    """A ``scenes`` job: the product image ``input_key`` in ``count`` scenes, at the catalog's
    price (free for a test key: ``test``)."""
    return jobs.create_job(
        session,
        backends,
        user_id=user_id,
        kind=SCENES_KIND,
        count=count,
        price=scene_price(count),
        base_url=base_url,
        input_key=input_key,
        category=category,
        product_id=product_id,
        webhook_url=webhook_url,
        test=test,
    )


@dataclass(frozen=True)
class ScenesKind:
    """Scene jobs: the product placed in the registry's ``scenes`` engine's scenes (no
    parameters beyond the row's count, category and seed)."""

    engine: MultiImageEngine
    load_input: Callable[[str], DecodedImage]
    scene_size: int
    result_format: str = "jpeg"
    subject: str = "product"

    def plan(self, claim: Claim) -> list[PlannedImage]:
        self.engine.load()
        image = self.load_input(claim.input_key)
        params = ScenesParams(
            num_scenes=claim.count, category=claim.category, seed=claim.seed, size=self.scene_size
        )
        return self.engine.plan(EngineInputs(image.pixels), params)

    def record(self, session: Session, claim: Claim, rendered: Rendered) -> None:
        return None
