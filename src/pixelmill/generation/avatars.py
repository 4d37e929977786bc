"""The ``avatar`` job kind: plans a job's avatars with the registry's guided or reference
avatar engine and saves each delivered one to the library (image in the library store, an
``avatars`` row with its landmarks) in the transaction that records it."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.orm import Session

from pixelmill.engines.avatar import GuidedAvatarParams, ReferenceAvatarParams
from pixelmill.engines.base import EngineInputs, MultiImageEngine, PlannedImage
from pixelmill.generation.service import AvatarJobParams
from pixelmill.imaging import DecodedImage
from pixelmill.jobs.runner import Rendered
from pixelmill.jobs.service import Claim
from pixelmill.library import service as library
from pixelmill.storage import ObjectStorage


@dataclass(frozen=True)
class AvatarKind:
    guided: MultiImageEngine
    reference: MultiImageEngine
    load_input: Callable[[str], DecodedImage]
    library_store: ObjectStorage
    height: int = 1024
    result_format: str = "png"
    subject: str = "avatar"

    def plan(self, claim: Claim) -> list[PlannedImage]:
        p = claim.typed(AvatarJobParams)
        prompt = p.prompt or ""
        if p.generation_type == "reference":
            image = self.load_input(claim.input_key)
            reference = ReferenceAvatarParams(
                num_outputs=claim.count,
                seed=claim.seed,
                height=self.height,
                additional_details=prompt or None,
            )
            self.reference.load()
            return self.reference.plan(EngineInputs(image.pixels), reference)
        guided = GuidedAvatarParams(
            prompt=prompt,
            characteristics=p.characteristics,
            num_outputs=claim.count,
            seed=claim.seed,
            height=self.height,
        )
        self.guided.load()
        return self.guided.plan(EngineInputs.none(), guided)

    def record(self, session: Session, claim: Claim, rendered: Rendered) -> None:
        p = claim.typed(AvatarJobParams)
        key = f"avatars/{uuid.uuid4().hex}.png"
        self.library_store.put(key, rendered.data, "image/png")
        name = p.name or rendered.label
        if p.name and claim.count > 1:
            name = f"{name} {rendered.position + 1}"
        data = rendered.output.data
        library.create_avatar(
            session,
            claim.user_id,
            name=name,
            image_key=key,
            kind=p.generation_type,
            gender=str(data.get("gender") or "unspecified"),
            prompt=p.prompt,
            characteristics=data.get("attributes") or p.characteristics,
            landmarks=data.get("landmarks"),
            job_id=claim.job_id,
        )
