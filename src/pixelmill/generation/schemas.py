"""Request and response models of generation (``/api/v2/generate/avatar`` and its job)."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, Field, model_validator

from pixelmill.jobs.schemas import JobStatus
from pixelmill.library.schemas import AvatarOut
from pixelmill.schemas import TestFlag, Timestamp

MAX_OUTPUTS = 30
"""Outputs per generate call (the interface's Limits table); a job renders them one by one."""


class AvatarCreate(BaseModel):
    generation_type: Literal["reference", "guided"] = Field(
        "guided",
        description="guided: drawn from `prompt` (and `characteristics`); reference: the "
        "person in `reference_image_url` / `reference_image_base64`",
    )
    reference_image_url: str | None = Field(None, description="reference: a photo of a person")
    reference_image_base64: str | None = Field(None, description="reference: the photo, base64")
    prompt: str | None = Field(None, max_length=2000, description="guided: who to draw")
    characteristics: dict[str, str] | None = Field(
        None,
        description="guided: gender, age, skin_tone, hair_color, hair_style, clothing_color, "
        "clothing_type, pose, background",
    )
    num_outputs: int = Field(
        1,
        ge=1,
        le=MAX_OUTPUTS,
        validation_alias=AliasChoices("num_outputs", "count"),
        description="how many avatars (1 credit each); `count` is accepted too",
    )
    name: str | None = Field(None, max_length=255, description="default: from the prompt")
    webhook_url: str | None = None

    @model_validator(mode="after")
    def _inputs_for_type(self) -> AvatarCreate:
        if self.generation_type == "reference":
            if not (self.reference_image_url or self.reference_image_base64):
                raise ValueError(
                    "generation_type reference needs reference_image_url or reference_image_base64"
                )
        elif not ((self.prompt or "").strip() or self.characteristics):
            raise ValueError("generation_type guided needs a prompt or characteristics")
        return self


class AvatarPhotoCreate(BaseModel):
    avatar_uuid: str = Field(description="a saved avatar")
    product_uuid: str = Field(description="a saved product")
    num_outputs: int = Field(6, ge=1, le=MAX_OUTPUTS, description="1 credit per image")
    prompt: str | None = Field(
        None, max_length=2000, description="steers the scenes (keywords such as beach, office)"
    )
    webhook_url: str | None = None


class AvatarJobCreated(BaseModel):
    """The 202 body of ``POST /api/v2/generate/avatar``."""

    job_id: str
    status: str
    poll_url: str
    images_to_generate: int
    credits_reserved: int
    credits_remaining: int
    test: TestFlag = False


class AvatarJobStatus(JobStatus):
    """An avatar job; its finished avatars are also in ``GET /api/v2/avatars``."""

    generation_type: str
    avatars: list[AvatarOut]


class SavedAvatarOut(BaseModel):
    """An avatar of the studio (``/api/avatars/saved``): the integer ``id`` of the JWT surface
    beside the library's ``uuid`` (the same avatar in ``GET /api/v2/avatars``)."""

    id: int
    uuid: str
    name: str
    kind: str = Field(description="saved, variation, guided or reference (v2 jobs), sample")
    image_url: str = Field(description="signed, expiring URL of the avatar image")
    prompt: str | None = None
    style: str | None = None
    base_model_id: str | None = None
    parent_id: int | None = Field(None, description="the avatar this is a variation of")
    samples: list[str] = Field(
        default_factory=list, description="URLs of the studio samples made when it was saved"
    )
    variations: list[SavedAvatarOut] | None = Field(
        None, description="with include_variations=true: the variations saved under it"
    )
    created_at: Timestamp


class SavedAvatarCreated(SavedAvatarOut):
    credits_used: int = 0
    credits_remaining: int | None = None
    details: dict[str, object] = Field(default_factory=dict)
