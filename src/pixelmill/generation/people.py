"""The ``product_photo`` and ``tryon`` job kinds: a saved product with a saved avatar, through
the registry's engine of the catalog operation of the same name. The plan loads the avatar
and the product from the library store and hands the avatar's landmarks to the engine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.orm import Session

from pixelmill.engines.base import EngineInputs, MultiImageEngine, PlannedImage
from pixelmill.imaging import DecodedImage
from pixelmill.jobs.runner import Rendered
from pixelmill.jobs.service import Claim


def people_params(claim: Claim) -> dict[str, object]:
    """The engine parameters of a people job, from the job row."""
    p = claim.params
    return {
        "num_outputs": claim.count,
        "prompt": p.get("prompt"),
        "category": claim.category,
        "seed": claim.seed,
        "landmarks": p.get("landmarks"),
    }


@dataclass(frozen=True)
class PeopleKind:
    engine: MultiImageEngine
    load_input: Callable[[str], DecodedImage]
    result_format: str = "jpeg"
    subject: str = "product and avatar"

    def plan(self, claim: Claim) -> list[PlannedImage]:
        avatar = self.load_input(str(claim.params["avatar_key"]))
        product = self.load_input(claim.input_key)
        params = self.engine.Params.model_validate(people_params(claim))
        self.engine.validate(params)
        self.engine.load()
        inputs = EngineInputs(avatar.pixels, {"product": product.pixels})
        return self.engine.plan(inputs, params)

    def record(self, session: Session, claim: Claim, rendered: Rendered) -> None:
        return None
