"""``/api/avatars`` (JWT), the avatar studio: guided avatars from a prompt and studio avatars
from a reference photo, synchronously through the pipeline (1 credit per avatar, reserved,
then captured or released, with a history row; the images come back as signed result URLs;
``POST /api/v2/generate/avatar`` is the asynchronous way that also saves them to the library),
and the saved avatars (``/saved``: the library's avatars under integer ids; saving a person
photo adds six samples for 6 credits, a variation under a parent is free)."""

from __future__ import annotations

from typing import Annotated

import numpy as np
from fastapi import APIRouter, Form, Query
from pydantic import BaseModel, Field

from pixelmill.api.deps import BaseUrl, JwtUser, ReadSession, Res
from pixelmill.generation import studio
from pixelmill.generation.schemas import MAX_OUTPUTS, SavedAvatarCreated, SavedAvatarOut
from pixelmill.imaging import DecodedImage
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.results import Outcome

router = APIRouter(prefix="/api/avatars", tags=["avatar studio"])

NO_INPUT = DecodedImage(
    pixels=np.zeros((1, 1, 3), np.uint8), format="png", width=1, height=1, bytes_in=0,
    had_alpha=False,
)  # fmt: skip
"""What a guided avatar is drawn from: nothing (``bytes_in`` 0: its history row has no input
size)."""


class GuidedCreate(BaseModel):
    prompt: str = Field(min_length=1, max_length=2000, description="who to draw")
    count: int = Field(3, ge=1, le=MAX_OUTPUTS, description="1 credit each")


class ReferenceCreate(BaseModel):
    reference_image: str = Field(min_length=1, description="a photo of a person, base64")
    count: int = Field(ge=1, le=MAX_OUTPUTS, description="1 credit each")
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
    body: GuidedCreate, user: JwtUser, resources: Res, base_url: BaseUrl
) -> AvatarImages:
    """``count`` flat-illustration avatars drawn from the prompt (procedural, no generative
    model; words it cannot draw are listed in ``details.unrecognised``)."""
    outcome = await resources.pipeline.run(
        "avatar_guided",
        NO_INPUT,
        {"prompt": body.prompt, "num_outputs": body.count},
        user=user,
        surface="avatars",
        base_url=base_url,
        output_format="png",
    )
    return AvatarImages.of(outcome)


@router.post("/generate-from-reference", response_model=AvatarImages)
async def generate_from_reference(
    body: ReferenceCreate, user: JwtUser, resources: Res, base_url: BaseUrl
) -> AvatarImages:
    """``count`` studio avatars of the person in the photo (a photo without a person is a
    422, nothing charged)."""
    outcome = await resources.pipeline.run(
        "avatar_reference",
        ImageSource("base64", body.reference_image),
        {"num_outputs": body.count, "additional_details": body.additional_details},
        user=user,
        surface="avatars",
        base_url=base_url,
        output_format="png",
    )
    return AvatarImages.of(outcome)


@router.get("/saved", response_model=list[SavedAvatarOut])
def list_saved(
    user: JwtUser,
    session: ReadSession,
    resources: Res,
    base_url: BaseUrl,
    include_variations: Annotated[bool, Query(description="list each one's variations")] = False,
) -> list[SavedAvatarOut]:
    """The account's avatars (saved here or made by ``/api/v2/generate/avatar``), newest
    first, each with the URLs of its samples; variations are nested under their parent."""
    saved = studio.list_saved(session, user.id)
    numbers = {
        a.id: a.number for s in saved for a in (s.avatar, *s.variations) if a.number is not None
    }
    signer = resources.signer
    return [studio.saved_out(signer, base_url, s, numbers, include_variations) for s in saved]


@router.post("/saved", response_model=SavedAvatarCreated)
async def save(
    user: JwtUser,
    resources: Res,
    base_url: BaseUrl,
    name: Annotated[str, Form(min_length=1, max_length=255)],
    image_url: Annotated[str, Form(description="the person photo (or a variation's image)")],
    base_model_id: Annotated[str | None, Form(max_length=255)] = None,
    prompt: Annotated[str | None, Form(max_length=2000)] = None,
    style: Annotated[str | None, Form(max_length=64)] = None,
    parent_id: Annotated[int | None, Form(description="save as a variation of it (free)")] = None,
) -> SavedAvatarCreated:
    """Save an avatar. A new avatar must show a person (else 422, nothing charged) and gets
    six studio samples for 6 credits; a variation (``parent_id``) is saved as given, free."""
    return await studio.save(
        resources,
        user,
        base_url,
        name=name,
        image_url=image_url,
        base_model_id=base_model_id,
        prompt=prompt,
        style=style,
        parent_id=parent_id,
    )
