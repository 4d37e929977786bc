"""The avatar studio's saved avatars (``/api/avatars/saved``, JWT): one table with the v2
library's avatars, shown under integer ids. Saving a person photo keeps it as the avatar and
adds six studio samples of that person (the reference engine's framings and backdrops) as its
children; a variation is another image saved under a parent, with no samples."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from pixelmill.db.models import Avatar
from pixelmill.library import service as library

SAMPLES = 6
"""Samples generated when an avatar is saved (1 credit each, through the reference engine)."""
SAVED, SAMPLE, VARIATION = "saved", "sample", "variation"


@dataclass(frozen=True)
class StudioAvatar:
    """A top-level avatar with its children, split the way the studio shows them."""

    avatar: Avatar
    samples: list[Avatar]
    variations: list[Avatar]


def save_avatar(
    session: Session,
    user_id: int,
    *,
    name: str,
    image_key: str,
    sample_keys: Sequence[str],
    prompt: str | None,
    style: str | None,
    base_model_id: str | None,
    parent: Avatar | None,
) -> StudioAvatar:
    """Write the saved avatar (a variation of ``parent`` when given) and its samples."""
    characteristics = {"base_model_id": base_model_id} if base_model_id else None
    avatar = library.create_avatar(
        session,
        user_id,
        name=name,
        image_key=image_key,
        kind=VARIATION if parent is not None else SAVED,
        prompt=prompt,
        style=style,
        characteristics=characteristics,
        parent_id=parent.id if parent is not None else None,
    )
    samples = [
        library.create_avatar(
            session,
            user_id,
            name=f"{name} · sample {i + 1}",
            image_key=key,
            kind=SAMPLE,
            style=style,
            parent_id=avatar.id,
        )
        for i, key in enumerate(sample_keys)
    ]
    return StudioAvatar(avatar, samples, [])


def list_saved(session: Session, user_id: int) -> list[StudioAvatar]:
    """The account's top-level avatars (saved in the studio or made by v2 jobs), newest first,
    each with its samples and variations."""
    tops = library.studio_avatars(session, user_id)
    children = library.studio_avatars(session, user_id, [a.id for a in tops]) if tops else []
    out = []
    for top in tops:
        mine = [c for c in children if c.parent_id == top.id]
        out.append(
            StudioAvatar(
                top,
                [c for c in mine if c.kind == SAMPLE],
                [c for c in mine if c.kind != SAMPLE],
            )
        )
    return out
