"""The public gallery: fixed guided avatars (``engines.avatar.GALLERY``) that any account may
use. Each image is drawn once by the registry's guided engine (deterministic for its prompt
and seed), then kept in the library store under ``gallery/``."""

from __future__ import annotations

import json
from typing import cast

from pydantic import BaseModel, Field

from pixelmill.engines.avatar import GALLERY, GalleryModel, GuidedAvatarParams
from pixelmill.engines.base import EngineInputs, MultiImageEngine
from pixelmill.generation.service import Model
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


def gallery_key(model: GalleryModel, ext: str = "png") -> str:
    return f"gallery/{model.id}.{ext}"


def _draw(engine: MultiImageEngine, store: ObjectStorage, model: GalleryModel) -> bytes:
    """Draw the model and keep its PNG and its landmarks (JSON) in the store. Always the
    offline engine (the one a ``PIXELMILL_ROUTE_AVATAR_GUIDED`` route wraps as ``inner``): the
    gallery's looks are fixed drawings, the same on every server, and cost no provider call."""
    engine = cast(MultiImageEngine, getattr(engine, "inner", engine))
    params = GuidedAvatarParams(prompt=model.prompt, seed=model.seed, num_outputs=1)
    engine.load()
    [planned] = engine.plan(EngineInputs.none(), params)
    output = planned.render()
    data = encode_image(output.pixels, "png")
    landmarks = json.dumps(output.data.get("landmarks") or {}).encode()
    # The image first: stored landmarks mean the image is there too.
    store.put(gallery_key(model), data, "image/png")
    store.put(gallery_key(model, "json"), landmarks, "application/json")
    return data


def gallery_image(engine: MultiImageEngine, store: ObjectStorage, model: GalleryModel) -> bytes:
    """The model's PNG: from the store, or drawn now and stored (blocking; CPU)."""
    stored = store.get(gallery_key(model))
    return stored.data if stored is not None else _draw(engine, store, model)


def gallery_person(engine: MultiImageEngine, store: ObjectStorage, model: GalleryModel) -> Model:
    """The model as the person of a people job: its stored image and landmarks (drawn first
    if needed; blocking)."""
    landmarks = store.get(gallery_key(model, "json"))
    if landmarks is None:
        _draw(engine, store, model)
        landmarks = store.get(gallery_key(model, "json"))
    points = json.loads(landmarks.data) if landmarks is not None else None
    return Model(gallery_key(model), points or None)
