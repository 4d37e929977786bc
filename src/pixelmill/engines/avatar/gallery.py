"""The public gallery: fixed guided avatars (a prompt and a seed each) that any account can
name by ``id`` (``model_id`` in the API). The ids are stable; clients discover them from the
avatar listing the API builds from :data:`GALLERY`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GalleryModel:
    """One public model: render it with the guided engine's ``prompt`` and ``seed``."""

    id: str
    name: str
    gender: str
    prompt: str
    seed: int


GALLERY: tuple[GalleryModel, ...] = (
    GalleryModel("model_ava", "Ava", "female",
                 "named Ava, young woman, light skin, long wavy auburn hair, cream sweater, "
                 "blue jeans, white sneakers, standing, studio", 101),
    GalleryModel("model_ben", "Ben", "male",
                 "named Ben, adult man, medium skin, short dark brown hair, navy blazer, "
                 "grey trousers, brown shoes, hands in pockets, studio", 102),
    GalleryModel("model_chloe", "Chloe", "female",
                 "named Chloe, woman, deep skin, afro, mustard t-shirt, black jeans, "
                 "hands on hips, studio", 103),
    GalleryModel("model_daniel", "Daniel", "male",
                 "named Daniel, man, olive skin, black curly hair, beard, white t-shirt, "
                 "khaki trousers, standing, studio", 104),
    GalleryModel("model_elena", "Elena", "female",
                 "named Elena, middle-aged woman, fair skin, blonde bob, teal blouse, "
                 "black skirt, standing, studio", 105),
    GalleryModel("model_felix", "Felix", "male",
                 "named Felix, young man, dark brown skin, buzz cut, green hoodie, "
                 "black trousers, white sneakers, standing, studio", 106),
    GalleryModel("model_grace", "Grace", "female",
                 "named Grace, woman, tan skin, long black hair, red dress, "
                 "presenting, studio", 107),
    GalleryModel("model_hiro", "Hiro", "male",
                 "named Hiro, man, light skin, short black hair, glasses, grey sweater, "
                 "navy trousers, standing, studio", 108),
    GalleryModel("model_iris", "Iris", "female",
                 "named Iris, senior woman, light skin, white hair in a bun, lavender "
                 "cardigan, beige trousers, standing, studio", 109),
    GalleryModel("model_kai", "Kai", "unspecified",
                 "named Kai, non-binary person, brown skin, short curly hair, denim jacket, "
                 "black jeans, standing, studio", 110),
)  # fmt: skip
"""At least eight public models, each a fixed prompt and seed of ``avatar_guided``."""

_BY_ID = {m.id: m for m in GALLERY}


def gallery_model(model_id: str) -> GalleryModel | None:
    """The public model with ``model_id``, or ``None``."""
    return _BY_ID.get(model_id)
