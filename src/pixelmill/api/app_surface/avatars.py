"""``/api/avatars`` (JWT), the avatar studio's generators: guided avatars from a prompt and
studio avatars from a reference photo, synchronously through the pipeline (1 credit per
avatar, reserved, then captured or released, with a history row). The images come back as
signed result URLs; ``POST /api/v2/generate/avatar`` is the asynchronous way that also saves
them to the library."""

from __future__ import annotations

import numpy as np
from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from pixelmill.api.deps import JwtUser, Res
from pixelmill.api.rendering import public_base_url
from pixelmill.imaging import DecodedImage
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.results import Outcome

router = APIRouter(prefix="/api/avatars", tags=["avatar studio"])

MAX_COUNT = 8
NO_INPUT = DecodedImage(
    pixels=np.zeros((1, 1, 3), np.uint8), format="png", width=1, height=1, bytes_in=0,
    had_alpha=False,
)  # fmt: skip
"""What a guided avatar is drawn from: nothing (the history row shows a 1×1 input)."""


class GuidedCreate(BaseModel):
    prompt: str = Field(min_length=1, max_length=2000, description="who to draw")
    count: int = Field(3, ge=1, le=MAX_COUNT, description="1 credit each")


class ReferenceCreate(BaseModel):
    reference_image: str = Field(min_length=1, description="a photo of a person, base64")
    count: int = Field(ge=1, le=MAX_COUNT, description="1 credit each")
    additional_details: str | None = Field(
        None, max_length=2000, description="looks such as cartoon, sketch, watercolour"
    )


class AvatarImages(BaseModel):
    success: bool = True
    images: list[str] = Field(description="signed, expiring URLs of the avatars")
    credits_used: int
    credits_remaining: int | None
    details: dict[str, object]

    @classmethod
    def of(cls, outcome: Outcome) -> AvatarImages:
        return cls(
            images=[image.url for image in outcome.images],
            credits_used=outcome.credits_used,
            credits_remaining=outcome.credits_remaining,
            details=outcome.details,
        )


@router.post("/generate-guided", response_model=AvatarImages)
async def generate_guided(
    body: GuidedCreate, user: JwtUser, resources: Res, request: Request
) -> AvatarImages:
    """``count`` flat-illustration avatars drawn from the prompt (procedural, no generative
    model; words it cannot draw are listed in ``details.unrecognised``)."""
    outcome = await resources.pipeline.run(
        "avatar_guided",
        NO_INPUT,
        {"prompt": body.prompt, "num_outputs": body.count},
        user=user,
        surface="avatars",
        base_url=public_base_url(request, resources),
        output_format="png",
    )
    return AvatarImages.of(outcome)


@router.post("/generate-from-reference", response_model=AvatarImages)
async def generate_from_reference(
    body: ReferenceCreate, user: JwtUser, resources: Res, request: Request
) -> AvatarImages:
    """``count`` studio avatars of the person in the photo (a photo without a person is a
    422, nothing charged)."""
    outcome = await resources.pipeline.run(
        "avatar_reference",
        ImageSource("base64", body.reference_image),
        {"num_outputs": body.count, "additional_details": body.additional_details},
        user=user,
        surface="avatars",
        base_url=public_base_url(request, resources),
        output_format="png",
    )
    return AvatarImages.of(outcome)
