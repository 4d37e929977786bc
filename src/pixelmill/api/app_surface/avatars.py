"""``/api/avatars`` (JWT), the avatar studio: guided avatars from a prompt and studio avatars
from a reference photo, synchronously through the pipeline (1 credit per avatar, reserved,
then captured or released, with a history row; the images come back as signed result URLs;
``POST /api/v2/generate/avatar`` is the asynchronous way that also saves them to the library),
and the saved avatars (``/saved``: the library's avatars under integer ids; saving a person
photo adds six samples for 6 credits, a variation under a parent is free)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from typing import Annotated

import numpy as np
from fastapi import APIRouter, Form, Query
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from pixelmill.api.deps import BaseUrl, JwtUser, Res
from pixelmill.db.models import Avatar
from pixelmill.generation import studio
from pixelmill.generation.people import check_person
from pixelmill.generation.schemas import SavedAvatarCreated, SavedAvatarOut
from pixelmill.imaging import DecodedImage
from pixelmill.library import service as library
from pixelmill.library.images import library_url, save_image
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.results import Outcome, StoredImage
from pixelmill.resources import Resources

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


def _saved_out(
    resources: Resources,
    base_url: str,
    saved: studio.StudioAvatar,
    numbers: dict[str, int],
    with_variations: bool,
) -> SavedAvatarOut:
    def url(a: Avatar) -> str:
        return library_url(resources.signer, base_url, a.image_key)

    def one(a: Avatar) -> SavedAvatarOut:
        assert a.number is not None
        return SavedAvatarOut(
            id=a.number,
            uuid=a.id,
            name=a.name,
            kind=a.kind,
            image_url=url(a),
            prompt=a.prompt,
            style=a.style,
            base_model_id=(a.characteristics or {}).get("base_model_id"),
            parent_id=numbers.get(a.parent_id or ""),
            created_at=a.created_at,
        )

    out = one(saved.avatar)
    out.samples = [url(s) for s in saved.samples]
    if with_variations:
        out.variations = [one(v) for v in saved.variations]
    return out


@router.get("/saved", response_model=list[SavedAvatarOut])
def list_saved(
    user: JwtUser,
    resources: Res,
    base_url: BaseUrl,
    include_variations: Annotated[bool, Query(description="list each one's variations")] = False,
) -> list[SavedAvatarOut]:
    """The account's avatars (saved here or made by ``/api/v2/generate/avatar``), newest
    first, each with the URLs of its samples; variations are nested under their parent."""
    with resources.db.read() as session:
        saved = studio.list_saved(session, user.id)
        numbers = {
            a.id: a.number for s in saved for a in (s.avatar, *s.variations) if a.number is not None
        }
        return [_saved_out(resources, base_url, s, numbers, include_variations) for s in saved]


class _SavedWithSamples:
    """The saved avatar and its samples, written in the transaction that pays for them."""

    def __init__(
        self,
        resources: Resources,
        base_url: str,
        write: Callable[[Session, list[str]], studio.StudioAvatar],
    ) -> None:
        self.resources = resources
        self.base_url = base_url
        self.write = write
        self.sample_keys: list[str] = []
        self.out: SavedAvatarOut | None = None

    async def prepare(self, stored: Sequence[StoredImage]) -> None:
        """The samples' result images, copied into the durable library store."""
        for image in stored:
            obj = await asyncio.to_thread(self.resources.storage.get, image.key)
            if obj is None:
                raise RuntimeError(f"a sample's result {image.key} is gone")
            key = f"avatars/{uuid.uuid4().hex}.{image.format}"
            await asyncio.to_thread(
                self.resources.library_storage.put, key, obj.data, f"image/{image.format}"
            )
            self.sample_keys.append(key)

    def record(self, session: Session) -> None:
        made = self.write(session, self.sample_keys)
        numbers = {made.avatar.id: made.avatar.number or 0}
        self.out = _saved_out(self.resources, self.base_url, made, numbers, with_variations=False)

    async def discard(self) -> None:
        for key in self.sample_keys:
            await asyncio.to_thread(self.resources.library_storage.delete, key)


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
    parent = None
    if parent_id is not None:
        with resources.db.read() as session:
            parent = library.get_avatar(session, user.id, str(parent_id))
    saved = await save_image(
        resources.inputs, resources.library_storage, ImageSource("url", image_url), user, "avatars"
    )
    if parent is None:
        # A new avatar: six samples, paid for in the transaction that writes it and them.
        await check_person(resources, saved, "image_url")

        def write(session: Session, sample_keys: list[str]) -> studio.StudioAvatar:
            return studio.save_avatar(
                session,
                user.id,
                name=name,
                image_key=saved.key,
                sample_keys=sample_keys,
                prompt=prompt,
                style=style,
                base_model_id=base_model_id,
                parent=None,
            )

        keep = _SavedWithSamples(resources, base_url, write)
        try:
            outcome = await resources.pipeline.run(
                "avatar_reference",
                saved.image,
                {"num_outputs": studio.SAMPLES, "additional_details": style},
                user=user,
                surface="avatars",
                base_url=base_url,
                output_format="png",
                delivery=keep,
            )
        except BaseException:  # nothing was charged: the upload and any copies go too
            await keep.discard()
            await asyncio.to_thread(resources.library_storage.delete, saved.key)
            raise
        assert keep.out is not None
        return SavedAvatarCreated(
            **keep.out.model_dump(),
            credits_used=outcome.credits_used,
            credits_remaining=outcome.credits_remaining,
            details=outcome.details,
        )
    with resources.db.transaction() as session:  # a variation, free
        parent = library.get_avatar(session, user.id, parent.id)  # it may be gone meanwhile
        made = studio.save_avatar(
            session,
            user.id,
            name=name,
            image_key=saved.key,
            sample_keys=[],
            prompt=prompt,
            style=style,
            base_model_id=base_model_id,
            parent=parent,
        )
        numbers = {made.avatar.id: made.avatar.number or 0}
        if parent.number is not None:
            numbers[parent.id] = parent.number
        out = _saved_out(resources, base_url, made, numbers, with_variations=False)
    return SavedAvatarCreated(
        **out.model_dump(),
        credits_used=0,
        credits_remaining=None,
        details={"method": "saved as given (a variation)"},
    )
