"""The public gallery: fixed guided avatars (``engines.avatar.GALLERY``) that any account may
use. Each image is drawn once by the registry's guided engine (deterministic for its prompt
and seed), then kept in the library store under ``gallery/``."""

from __future__ import annotations

from pydantic import BaseModel, Field

from pixelmill.engines.avatar import GALLERY, GalleryModel, GuidedAvatarParams
from pixelmill.engines.base import EngineInputs, MultiImageEngine
from pixelmill.imaging import encode_image
from pixelmill.storage import ObjectStorage


class GalleryAvatar(BaseModel):
    """A public model: its ``id`` is what ``model_id`` names."""

    id: str
    name: str
    gender: str
    prompt: str = Field(description="how the guided engine draws it (with a fixed seed)")
    image_url: str

    @classmethod
    def of(cls, model: GalleryModel, base_url: str) -> GalleryAvatar:
        url = base_url.rstrip("/") + f"/api/v2/avatars/public/{model.id}.png"
        return cls(
            id=model.id, name=model.name, gender=model.gender, prompt=model.prompt, image_url=url
        )


def gallery() -> tuple[GalleryModel, ...]:
    return GALLERY


def gallery_key(model: GalleryModel) -> str:
    return f"gallery/{model.id}.png"


def gallery_image(engine: MultiImageEngine, store: ObjectStorage, model: GalleryModel) -> bytes:
    """The model's PNG: from the store, or drawn now and stored (blocking; CPU)."""
    key = gallery_key(model)
    stored = store.get(key)
    if stored is not None:
        return stored.data
    params = GuidedAvatarParams(prompt=model.prompt, seed=model.seed, num_outputs=1)
    engine.load()
    [planned] = engine.plan(EngineInputs.none(), params)
    data = encode_image(planned.render().pixels, "png")
    store.put(key, data, "image/png")
    return data
