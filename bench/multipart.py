"""A small labelled set of multi-part products (issue 44 item 3): each item is a product made
of parts (a cup on a saucer, a bottle and its cap, a pair of shoes, a bag and its strap, a pot
and its lid...) drawn as shaded shapes filled with photo textures from scikit-image, laid over
a background, with the exact mask of every part. Some are framed loosely, some tightly (a part
runs off the frame's edge), and some carry a small detached distractor (a crumb, a speck) that
is not part of the product. Deterministic (a fixed seed), nothing downloaded.

``items()`` gives the 20 items; ``crops()`` adds crops of real photos (coffee's centre square)
whose parts are drawn by hand (:func:`coffee_saucer`); ``shadowed()`` gives 56 products with
soft shadows on plain and gradient backdrops (a shadow is not a part).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt
from skimage import data

Image = npt.NDArray[np.uint8]
Part = npt.NDArray[np.bool_]

SIZE = 512


@dataclass(frozen=True)
class Item:
    name: str
    image: Image
    parts: list[Part]
    """One exact mask per part (the product is their union)."""


def _photo(name: str) -> npt.NDArray[np.float32]:
    img = np.asarray(getattr(data, name)(), np.float32)
    if img.ndim == 2:
        img = np.dstack([img] * 3)
    return np.asarray(cv2.resize(img[..., :3], (SIZE, SIZE)), np.float32)


def _textures() -> dict[str, npt.NDArray[np.float32]]:
    """Part surfaces: flat colours with a highlight and a few photo textures."""
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    light = 0.55 + 0.45 * np.clip(
        1 - ((xx - SIZE * 0.4) ** 2 + (yy - SIZE * 0.45) ** 2) / (0.45 * SIZE) ** 2, 0, 1
    )
    flat = {
        "red": (170, 40, 35),
        "blue": (35, 80, 170),
        "white": (235, 232, 225),
        "black": (30, 30, 34),
        "green": (40, 120, 60),
        "gold": (200, 160, 60),
    }
    out = {k: np.array(v, np.float32) * light[..., None] for k, v in flat.items()}
    out["coffee"] = _photo("coffee")
    out["leather"] = _photo("brick") * np.array([0.6, 0.4, 0.25], np.float32)
    out["wood"] = _photo("gravel") * np.array([0.8, 0.6, 0.4], np.float32)
    return out


def _backgrounds() -> dict[str, npt.NDArray[np.float32]]:
    t = np.linspace(0.0, 1.0, SIZE, dtype=np.float32)[:, None, None]
    gradient = (
        np.array([238, 226, 205], np.float32) * (1 - t) + np.array([150, 160, 175], np.float32) * t
    )
    return {
        "plain": np.full((SIZE, SIZE, 3), (226, 225, 230), np.float32),
        "gradient": np.broadcast_to(gradient, (SIZE, SIZE, 3)).astype(np.float32),
        "grass": _photo("grass") * np.array([0.55, 0.85, 0.45], np.float32),
        "table": _photo("brick") * np.array([0.95, 0.75, 0.55], np.float32),
    }


def _canvas() -> npt.NDArray[np.uint8]:
    return np.zeros((SIZE, SIZE), np.uint8)


def _ellipse(c: tuple[float, float], ax: tuple[float, float], angle: float = 0.0) -> Part:
    m = _canvas()
    cv2.ellipse(m, (round(c[0]), round(c[1])), (round(ax[0]), round(ax[1])), angle, 0, 360, 255, -1)
    return m > 0


def _rect(x0: float, y0: float, x1: float, y1: float) -> Part:
    m = _canvas()
    cv2.rectangle(m, (round(x0), round(y0)), (round(x1), round(y1)), 255, -1)
    return m > 0


def _poly(points: list[tuple[float, float]]) -> Part:
    m = _canvas()
    cv2.fillPoly(m, [np.array(points, np.float32).round().astype(np.int32)], 255)
    return m > 0


def _ring(
    c: tuple[float, float], ax: tuple[float, float], width: int, arc: tuple[int, int]
) -> Part:
    m = _canvas()
    cv2.ellipse(
        m, (round(c[0]), round(c[1])), (round(ax[0]), round(ax[1])), 0, arc[0], arc[1], 255, width
    )
    return m > 0


def _products(rng: np.random.Generator, s: float, dx: float, dy: float) -> dict[str, list[Part]]:
    """Part masks (front to back order does not matter: earlier parts are drawn on top) of each
    product kind, scaled by ``s`` about the centre and shifted by ``(dx, dy)`` pixels."""
    c = SIZE / 2

    def p(x: float, y: float) -> tuple[float, float]:
        return (c + (x - c) * s + dx, c + (y - c) * s + dy)

    def a(v: float) -> float:
        return v * s

    cup = _ellipse(p(256, 210), (a(70), a(80))) | _rect(*p(186, 140), *p(326, 215))
    saucer = _ellipse(p(256, 300), (a(190), a(70)))
    bottle = _ellipse(p(256, 320), (a(85), a(130))) | _rect(*p(226, 130), *p(286, 230))
    cap = _rect(*p(220, 80), *p(292, 135))
    shoe1 = _ellipse(p(170, 300), (a(70), a(150)), -8)
    shoe2 = _ellipse(p(345, 300), (a(70), a(150)), 8)
    bag = _poly([p(150, 220), p(362, 220), p(400, 430), p(112, 430)])
    strap = _ring(p(256, 220), (a(95), a(110)), max(3, round(a(18))), (180, 360))
    pot = _ellipse(p(256, 310), (a(150), a(95)))
    lid = _ellipse(p(256, 210), (a(150), a(32))) | _ellipse(p(256, 172), (a(22), a(16)))
    lamp_shade = _poly([p(176, 90), p(336, 90), p(380, 230), p(132, 230)])
    lamp_base = _rect(*p(246, 230), *p(266, 400)) | _ellipse(p(256, 410), (a(90), a(22)))
    watch = _ellipse(p(256, 256), (a(80), a(80)))
    band = _rect(*p(216, 40), *p(296, 180)) | _rect(*p(216, 330), *p(296, 472))
    del rng
    return {
        "cup+saucer": [cup, saucer & ~cup],
        "bottle+cap": [bottle, cap & ~bottle],
        "pair of shoes": [shoe1, shoe2 & ~shoe1],
        "bag+strap": [bag, strap & ~bag],
        "pot+lid": [pot, lid & ~pot],
        "lamp": [lamp_shade, lamp_base & ~lamp_shade],
        "watch+band": [watch, band & ~watch],
    }


KINDS = {
    "cup+saucer": ("white", "red"),
    "bottle+cap": ("green", "gold"),
    "pair of shoes": ("leather", "leather"),
    "bag+strap": ("blue", "black"),
    "pot+lid": ("coffee", "black"),
    "lamp": ("white", "gold"),
    "watch+band": ("gold", "leather"),
}


EDGE_SIGMA = 0.8
"""Each part's mask is blurred by this Gaussian before it is composited (anti-aliased edges)."""


def opaque_core(part: Part) -> Part:
    """The pixels of ``part`` whose alpha in the composite is at least 0.9: the mask less its
    boundary ring, where the blurred edge gives 0.73 or less (a perfect cut-out is not opaque
    there, so a thin strap cannot count as kept by its every pixel)."""
    blurred = cv2.GaussianBlur(part.astype(np.float32), (0, 0), EDGE_SIGMA)
    return part & (blurred >= 0.9)


def _draw(
    parts: list[Part],
    skins: tuple[str, ...],
    textures: dict[str, npt.NDArray[np.float32]],
    background: npt.NDArray[np.float32],
) -> Image:
    out = background.copy()
    for mask, skin in zip(parts[::-1], skins[::-1], strict=True):
        alpha = cv2.GaussianBlur(mask.astype(np.float32), (0, 0), EDGE_SIGMA)[..., None]
        out = textures[skin] * alpha + out * (1 - alpha)
    return np.asarray(np.clip(out + 0.5, 0, 255), np.uint8)


def items() -> list[Item]:
    """20 composites: every product kind at a loose and a tight framing over the backgrounds
    in turn, three with a small detached distractor, two tight and off-centre, and a saucer
    wider than the frame."""
    rng = np.random.default_rng(44)
    textures, backs = _textures(), _backgrounds()
    back_names = list(backs)
    out: list[Item] = []
    framings = [("loose", 0.8, 0.0, 0.0), ("tight", 1.3, 0.0, 30.0)]
    k = 0
    for framing, s, dx, dy in framings:
        for kind, skins in KINDS.items():
            parts = _products(rng, s, dx, dy)[kind]
            back = back_names[k % len(back_names)]
            k += 1
            image = _draw(parts, skins, textures, backs[back])
            out.append(Item(f"{kind} ({framing}, {back})", image, parts))
    # Far-off small distractors: not part of the product (the truth leaves them out).
    for i, kind in enumerate(("bottle+cap", "cup+saucer", "pair of shoes")):
        parts = _products(rng, 0.75, -30.0, 0.0)[kind]
        back = back_names[i % len(back_names)]
        image = _draw(parts, KINDS[kind], textures, backs[back])
        x, y = 440 + int(rng.integers(0, 20)), 60 + int(rng.integers(0, 40))
        cv2.circle(image, (x, y), 9, (25, 25, 25), -1, cv2.LINE_AA)
        out.append(Item(f"{kind} + crumb ({back})", image, parts))
    # Two more tight framings with the product off-centre (a part running off the edge).
    for kind in ("cup+saucer", "pot+lid"):
        parts = _products(rng, 1.4, 40.0, 40.0)[kind]
        image = _draw(parts, KINDS[kind], textures, backs["gradient"])
        out.append(Item(f"{kind} (tight, off-centre)", image, parts))
    # A cup whose saucer is wider than the frame and runs off its sides and bottom (as in
    # coffee()'s centre square), over the table.
    parts = _products(rng, 1.6, 0.0, 90.0)["cup+saucer"]
    image = _draw(parts, KINDS["cup+saucer"], textures, backs["table"])
    out.append(Item("cup+saucer (saucer off the frame, table)", image, parts))
    return out


@dataclass(frozen=True)
class Shadowed:
    name: str
    image: Image
    parts: list[Part]
    shadow: Part
    """Where the shadow darkens the backdrop by more than 10 %, outside the product."""


def shadowed() -> list[Shadowed]:
    """56 composites of the product kinds with a soft shadow on the plain and the gradient
    backdrop, at two framings (0.8 and 1.2): a drop shadow (the product's outline shifted down
    and right, blurred, darkening by up to 55 %) and a contact shadow (a flat blurred ellipse
    under the product, up to 60 %). Nothing there but the product should be opaque."""
    rng = np.random.default_rng(0)
    textures, backs = _textures(), _backgrounds()
    out: list[Shadowed] = []
    for kind, skins in KINDS.items():
        for back in ("plain", "gradient"):
            for s, dy in ((0.8, 0.0), (1.2, 10.0)):
                parts = _products(rng, s, 0.0, dy)[kind]
                union = np.logical_or.reduce(parts)
                for style in ("drop", "contact"):
                    if style == "drop":
                        cast = np.roll(np.roll(union, 18, 0), 14, 1).astype(np.float32)
                        dark = np.asarray(cv2.GaussianBlur(cast, (0, 0), 6), np.float32) * 0.55
                    else:
                        ys, xs = np.nonzero(union)
                        x0, x1 = int(xs.min()), int(xs.max())
                        under = _canvas()
                        axes = ((x1 - x0) // 2 + 10, 16)
                        cv2.ellipse(under, ((x0 + x1) // 2, int(ys.max())), axes, 0, 0, 360, 1, -1)
                        flat = under.astype(np.float32)
                        dark = np.asarray(cv2.GaussianBlur(flat, (0, 0), 7), np.float32) * 0.6
                    backdrop = backs[back] * (1 - dark[..., None])
                    image = _draw(parts, skins, textures, backdrop)
                    name = f"{kind} ({back}, {s}, {style} shadow)"
                    out.append(Shadowed(name, image, parts, (dark > 0.1) & ~union))
    return out


def coffee_saucer(h: int = 400, w: int = 600) -> tuple[Part, Part]:
    """Hand-drawn masks for ``skimage.data.coffee()`` (600 × 400), checked by eye against the
    photo: the saucer's visible surface (an ellipse a few pixels inside its rim, less the cup,
    its handle and the spoon) and the cup with the spoon (a generous outline: it is only used
    to take them out of the saucer)."""
    saucer = np.zeros((h, w), np.uint8)
    cv2.ellipse(saucer, (278, 227), (195, 155), -3, 0, 360, 255, -1)
    cup = np.zeros((h, w), np.uint8)
    cv2.ellipse(cup, (292, 118), (122, 102), 0, 0, 360, 255, -1)
    body = [(172, 130), (412, 130), (395, 230), (340, 285), (262, 302), (196, 292), (180, 240)]
    spoon = [(395, 75), (425, 75), (410, 250), (412, 330), (330, 330), (325, 270), (370, 240)]
    cv2.fillPoly(cup, [np.array(body, np.int32)], 255)
    cv2.fillPoly(cup, [np.array(spoon, np.int32)], 255)
    return (saucer > 0) & (cup == 0), cup > 0


def coffee_square() -> tuple[Image, Part]:
    """coffee()'s centre square (the 400 × 400 middle) at 512 px, and its saucer mask."""
    image = np.asarray(data.coffee(), np.uint8)  # type: ignore[no-untyped-call]
    saucer, _ = coffee_saucer()
    crop = np.asarray(
        cv2.resize(image[:, 100:500], (SIZE, SIZE), interpolation=cv2.INTER_AREA), np.uint8
    )
    mask = cv2.resize(
        saucer[:, 100:500].astype(np.uint8), (SIZE, SIZE), interpolation=cv2.INTER_NEAREST
    )
    return crop, mask > 0
