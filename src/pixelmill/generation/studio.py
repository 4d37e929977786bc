"""The avatar studio's saved avatars (``/api/avatars/saved``, JWT): one table with the v2
library's avatars, shown under integer ids. Saving a person photo keeps it as the avatar and
adds six studio samples of that person (the reference engine's framings and backdrops) as its
children; a variation is another image saved under a parent, with no samples. :func:`save`
is the whole save: the samples are made through the pipeline and paid for in the transaction
that writes the avatar and them."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from pixelmill.db.models import Avatar, User
from pixelmill.db.session import Database
from pixelmill.generation.people import check_person
from pixelmill.generation.schemas import SavedAvatarCreated, SavedAvatarOut
from pixelmill.jobs.requests import Backends
from pixelmill.library import service as library
from pixelmill.library.images import library_url, save_image
from pixelmill.operations.inputs import ImageSource
from pixelmill.operations.results import StoredImage
from pixelmill.storage import UrlSigner

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


def saved_out(
    signer: UrlSigner,
    base_url: str,
    saved: StudioAvatar,
    numbers: dict[str, int],
    with_variations: bool,
) -> SavedAvatarOut:
    """The studio's view of a saved avatar: integer ids (``numbers`` maps the parents'),
    signed image URLs, its samples' URLs, and its variations when asked."""

    def url(a: Avatar) -> str:
        return library_url(signer, base_url, a.image_key)

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


class _SavedWithSamples:
    """The saved avatar and its samples, written in the transaction that pays for them."""

    def __init__(
        self,
        backends: Backends,
        base_url: str,
        write: Callable[[Session, list[str]], StudioAvatar],
    ) -> None:
        self.backends = backends
        self.base_url = base_url
        self.write = write
        self.sample_keys: list[str] = []
        self.out: SavedAvatarOut | None = None

    async def prepare(self, stored: Sequence[StoredImage]) -> None:
        """The samples' result images, copied into the durable library store."""
        for image in stored:
            obj = await asyncio.to_thread(self.backends.storage.get, image.key)
            if obj is None:
                raise RuntimeError(f"a sample's result {image.key} is gone")
            key = f"avatars/{uuid.uuid4().hex}.{image.format}"
            await asyncio.to_thread(
                self.backends.library_storage.put, key, obj.data, f"image/{image.format}"
            )
            self.sample_keys.append(key)

    def record(self, session: Session) -> None:
        made = self.write(session, self.sample_keys)
        numbers = {made.avatar.id: made.avatar.number or 0}
        signer = self.backends.signer
        self.out = saved_out(signer, self.base_url, made, numbers, with_variations=False)

    async def discard(self) -> None:
        for key in self.sample_keys:
            await asyncio.to_thread(self.backends.library_storage.delete, key)


def _parent(db: Database, user_id: int, parent_id: int | None) -> Avatar | None:
    if parent_id is None:
        return None
    with db.read() as session:
        return library.get_avatar(session, user_id, str(parent_id))


async def save(
    backends: Backends,
    user: User,
    base_url: str,
    *,
    name: str,
    image_url: str,
    base_model_id: str | None,
    prompt: str | None,
    style: str | None,
    parent_id: int | None,
) -> SavedAvatarCreated:
    """Save an avatar from ``image_url``. A new avatar must show a person (else a 422,
    nothing charged) and gets :data:`SAMPLES` studio samples, 1 credit each; a variation
    (``parent_id``, read through the account's scope) is saved as given, free."""
    parent = await asyncio.to_thread(_parent, backends.db, user.id, parent_id)
    source = ImageSource("url", image_url)
    saved = await save_image(backends.inputs, backends.library_storage, source, user, "avatars")

    def write(session: Session, sample_keys: list[str], parent: Avatar | None) -> StudioAvatar:
        return save_avatar(
            session,
            user.id,
            name=name,
            image_key=saved.key,
            sample_keys=sample_keys,
            prompt=prompt,
            style=style,
            base_model_id=base_model_id,
            parent=parent,
        )

    if parent is None:
        # A new avatar: six samples, paid for in the transaction that writes it and them.
        await check_person(backends, saved, "image_url")
        keep = _SavedWithSamples(backends, base_url, lambda s, keys: write(s, keys, None))
        try:
            outcome = await backends.pipeline.run(
                "avatar_reference",
                saved.image,
                {"num_outputs": SAMPLES, "additional_details": style},
                user=user,
                surface="avatars",
                base_url=base_url,
                output_format="png",
                delivery=keep,
            )
        except BaseException:  # nothing was charged: the upload and any copies go too
            await keep.discard()
            await asyncio.to_thread(backends.library_storage.delete, saved.key)
            raise
        assert keep.out is not None
        return SavedAvatarCreated(
            **keep.out.model_dump(),
            credits_used=outcome.credits_used,
            credits_remaining=outcome.credits_remaining,
            details=outcome.details,
        )

    def variation(session: Session) -> SavedAvatarOut:  # free
        assert parent is not None
        still = library.get_avatar(session, user.id, parent.id)  # it may be gone meanwhile
        made = write(session, [], still)
        numbers = {made.avatar.id: made.avatar.number or 0}
        if still.number is not None:
            numbers[still.id] = still.number
        return saved_out(backends.signer, base_url, made, numbers, with_variations=False)

    out = await backends.db.transact(variation)
    return SavedAvatarCreated(
        **out.model_dump(),
        credits_used=0,
        credits_remaining=None,
        details={"method": "saved as given (a variation)"},
    )
