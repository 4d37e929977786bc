"""Avatar generation: an ``avatar`` job (guided from a prompt, or from a reference photo) priced
by the catalog's ``avatar_guided`` / ``avatar_reference`` operations, one credit per avatar.
Each delivered avatar is saved to the library (:mod:`pixelmill.generation.avatars`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field
from sqlalchemy.orm import Session

from pixelmill.categories import Category
from pixelmill.db.models import Avatar
from pixelmill.engines.product_photo.prompt import read_prompt
from pixelmill.generation.schemas import AvatarJobStatus
from pixelmill.jobs import service as jobs
from pixelmill.jobs.service import JobParams
from pixelmill.library import service as library
from pixelmill.library.schemas import avatar_out
from pixelmill.operations.catalog import CATALOG, Operation
from pixelmill.storage import UrlSigner

AVATAR_KIND = "avatar"
PEOPLE_KINDS = ("product_photo", "tryon")


class AvatarJobParams(JobParams):
    """What an ``avatar`` job keeps for its run: the request's generation fields."""

    generation_type: Literal["guided", "reference"] = "guided"
    prompt: str | None = None
    characteristics: dict[str, str] | None = None
    name: str | None = None


class PeopleJobParams(JobParams):
    """What a ``product_photo`` or ``tryon`` job keeps for its run: its person (an avatar's
    id, or none for a gallery model or an uploaded photo; the image; its landmarks), the
    prompt, and the warnings shown on every poll."""

    avatar_id: str | None = None
    avatar_key: str
    landmarks: dict[str, Any] | None = None
    prompt: str | None = None
    warnings: list[str] = Field(default_factory=list)


def operation_for(generation_type: str) -> Operation:
    return CATALOG[f"avatar_{generation_type}"]


def avatar_job_status(
    session: Session, signer: UrlSigner, user_id: int, job_id: str, base_url: str
) -> AvatarJobStatus:
    """The body of ``GET /api/v2/jobs/avatar/{job_id}``: the job and the avatars it saved."""
    job = jobs.get_job(session, user_id, job_id, kind=AVATAR_KIND)
    avatars = [
        avatar_out(signer, base_url, a) for a in library.avatars_of_job(session, user_id, job.id)
    ]
    status = jobs.job_status(session, signer, job, base_url)
    generation_type = AvatarJobParams.model_validate(job.params or {}).generation_type
    return AvatarJobStatus(**status.model_dump(), generation_type=generation_type, avatars=avatars)


@dataclass(frozen=True)
class Model:
    """The person of a people job: a saved avatar, a public gallery model or an uploaded
    photo (``own`` when the job should delete the image once it is terminal)."""

    image_key: str
    landmarks: dict[str, Any] | None = None
    avatar_id: str | None = None
    own: bool = False

    @classmethod
    def of(cls, avatar: Avatar) -> Model:
        return cls(avatar.image_key, avatar.landmarks, avatar.id)


def prompt_warnings(prompt: str | None) -> list[str]:
    """What a people job says about its prompt: the words its engines do not understand (the
    offline engines read keywords, not sentences)."""
    unused = read_prompt(prompt).unrecognised
    if not unused:
        return []
    return [
        "prompt words not used (the offline engines read scene, light and pose keywords): "
        + ", ".join(unused)
    ]


def people_kind(category: str) -> str:
    """``tryon`` for clothing, ``product_photo`` for everything else."""
    return "tryon" if category == Category.CLOTHING else "product_photo"
