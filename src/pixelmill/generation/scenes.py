"""The ``scenes`` job kind: the product placed in the registry's ``scenes`` engine's scenes, at
the catalog's price. A single job (``POST /api/v2/jobs``, ``/api/v2/generate/scenes...``) or
the items of a batch (:mod:`pixelmill.jobs.batches`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.orm import Session

from pixelmill.engines.base import EngineInputs, MultiImageEngine, PlannedImage
from pixelmill.engines.scenes import ScenesParams
from pixelmill.imaging import DecodedImage
from pixelmill.jobs.runner import Rendered
from pixelmill.jobs.service import Claim
from pixelmill.operations.catalog import CATALOG

SCENES_KIND = "scenes"


def scene_price(count: int) -> int:
    """What ``count`` scenes cost: the catalog's price of the ``scenes`` operation."""
    return CATALOG[SCENES_KIND].price(ScenesParams(num_scenes=count))


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
