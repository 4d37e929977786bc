"""A product's category from its photo, offline: no named-object classifier ships in a wheel
(``shared/docs/models.md``), so the guess rests on what can be measured.

In order of trust: words printed on the product (OCR keywords, :data:`PRODUCT_KEYWORDS`), a
person in the picture (a close portrait is not a product; a whole figure wears clothing), and
the product's silhouette on a plain studio background (:func:`silhouette`: its proportions,
width profile, legs, holes, symmetry and tone), with the file name as a weak hint. Each answer
carries the cue it rests on and an honest confidence: silhouettes tell a T-shirt from a bottle,
but not a serum from a wine bottle with certainty, and a busy scene is left ``other``.
Measured on a drawn set plus real photos (``bench/bench_classify.py``, docs/models.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.categories import Category, from_spec, to_spec

Mask = npt.NDArray[np.float32]


@dataclass(frozen=True)
class CategoryGuess:
    category: Category
    confidence: float
    method: str

    def as_dict(self) -> dict[str, object]:
        """As an analysis reports it: the category in the spec's vocabulary."""
        return {
            "category": str(to_spec(self.category)),
            "confidence": self.confidence,
            "method": self.method,
        }

    @classmethod
    def of(cls, reported: dict[str, object]) -> CategoryGuess:
        """Back from :meth:`as_dict`."""
        return cls(
            from_spec(str(reported["category"])),
            float(str(reported["confidence"])),
            str(reported["method"]),
        )


@dataclass(frozen=True)
class Silhouette:
    """Measurements of the main object's outline, in its own bounding box (0..1)."""

    aspect: float  # height / width
    fill: float  # object area / box area
    solidity: float  # object area / convex hull area
    symmetry: float  # IoU of the outline and its mirror image
    spans: npt.NDArray[np.float32]  # per tenth of the height: the row's extent / box width
    runs: npt.NDArray[np.float32]  # per tenth of the height: mean number of separate segments
    cover: npt.NDArray[np.float32]  # per tenth of the height: filled share of the box width
    hole: float  # enclosed background / (object + enclosed background)
    hole_x: float  # the largest hole's centre, 0..1 across the box
    hole_y: float  # and down it
    tone: float  # the object's mean luma, 0..255
    plain_background: bool  # a studio shot: the background is even


def _box(binary: npt.NDArray[np.uint8]) -> tuple[int, int, int, int] | None:
    count, _, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    if count <= 1:
        return None
    areas = stats[1:, cv2.CC_STAT_AREA]
    keep = [i + 1 for i, a in enumerate(areas) if a >= 0.02 * areas.max()]
    xs = [stats[i, cv2.CC_STAT_LEFT] for i in keep]
    ys = [stats[i, cv2.CC_STAT_TOP] for i in keep]
    x1 = [stats[i, cv2.CC_STAT_LEFT] + stats[i, cv2.CC_STAT_WIDTH] for i in keep]
    y1 = [stats[i, cv2.CC_STAT_TOP] + stats[i, cv2.CC_STAT_HEIGHT] for i in keep]
    return min(xs), min(ys), max(x1), max(y1)


def _plain_background(luma: npt.NDArray[np.float32], mask: Mask) -> bool:
    """A studio shot: the picture's border, where the saliency sees no object, is even."""
    ring = np.zeros(mask.shape, bool)
    ring[:8], ring[-8:], ring[:, :8], ring[:, -8:] = True, True, True, True
    outer = ring & (mask < 0.2)
    return bool(outer.sum() > 0.3 * ring.sum() and float(luma[outer].std()) < 14.0)


def _carved(rgb: npt.NDArray[np.uint8], salient: npt.NDArray[np.bool_]) -> npt.NDArray[np.uint8]:
    """On a studio shot, the saliency mask fills enclosed gaps (a ring's middle, a handle's
    loop); the background's own colour, read per row from the left and right borders, carves
    them out again. Falls back to the saliency alone when the carving would keep under a quarter (a
    product the colour of its backdrop)."""
    colour = rgb[..., :3].astype(np.float32)
    border = np.concatenate([colour[:, :8], colour[:, -8:]], axis=1)
    backdrop = np.median(border, axis=1)[:, None, :]
    differs = np.abs(colour - backdrop).max(axis=2) > 28.0
    carved = (salient & differs).astype(np.uint8)
    if carved.sum() < 0.25 * salient.sum():
        return salient.astype(np.uint8)
    # a highlight as bright as the backdrop, or a seam, must not split the outline
    k = max(3, round(0.012 * max(rgb.shape[:2]))) | 1
    return np.asarray(
        cv2.morphologyEx(
            carved, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
        ),
        np.uint8,
    )


def silhouette(rgb: npt.NDArray[np.uint8], mask: Mask) -> Silhouette | None:
    """The outline's measurements, or ``None`` when the mask holds no object of at least 1 % of
    the picture."""
    salient = mask > 0.5
    if salient.mean() < 0.01:
        return None
    luma = rgb[..., :3].astype(np.float32) @ np.asarray([0.299, 0.587, 0.114], np.float32)
    plain = _plain_background(luma, mask)
    binary = _carved(rgb, salient) if plain else salient.astype(np.uint8)
    box = _box(binary)
    if box is None:
        return None
    x0, y0, x1, y1 = box
    crop = binary[y0:y1, x0:x1]
    h, w = crop.shape
    aspect = h / w
    side = 160
    grid = cv2.resize(crop * 255, (side, side), interpolation=cv2.INTER_AREA) > 127
    hull = cv2.convexHull(cv2.findNonZero(crop))
    hull_area = max(1.0, float(cv2.contourArea(hull)))
    spans = np.zeros(10, np.float32)
    runs = np.zeros(10, np.float32)
    cover = np.zeros(10, np.float32)
    for band in range(10):
        rows = grid[band * 16 : (band + 1) * 16]
        s, n, c = [], [], []
        for row in rows:
            xs = np.flatnonzero(row)
            if xs.size == 0:
                s.append(0.0)
                n.append(0.0)
                c.append(0.0)
                continue
            s.append((xs[-1] - xs[0] + 1) / side)
            n.append(float(1 + np.count_nonzero(np.diff(xs) > 2)))
            c.append(xs.size / side)
        spans[band], runs[band], cover[band] = np.mean(s), np.mean(n), np.mean(c)
    symmetry = float((grid & grid[:, ::-1]).sum() / max(1, (grid | grid[:, ::-1]).sum()))
    # holes: background regions of the box not connected to its border
    background = (1 - crop).astype(np.uint8)
    padded = cv2.copyMakeBorder(background, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=1)
    count, labels, stats, centroids = cv2.connectedComponentsWithStats(padded, connectivity=4)
    outside = labels[0, 0]
    holes = [i for i in range(1, count) if i != outside]
    hole_area = float(sum(stats[i, cv2.CC_STAT_AREA] for i in holes))
    area = float(crop.sum())
    hole_x = hole_y = 0.5
    if holes:
        big = max(holes, key=lambda i: stats[i, cv2.CC_STAT_AREA])
        hole_x = float((centroids[big][0] - 1) / w)
        hole_y = float((centroids[big][1] - 1) / h)
    tone = float(luma[binary > 0].mean())
    return Silhouette(
        aspect=aspect,
        fill=area / (h * w),
        solidity=area / hull_area,
        symmetry=symmetry,
        spans=spans,
        runs=runs,
        cover=cover,
        hole=hole_area / max(1.0, area + hole_area),
        hole_x=hole_x,
        hole_y=hole_y,
        tone=tone,
        plain_background=plain,
    )


def _band(values: npt.NDArray[np.float32], lo: int, hi: int) -> float:
    return float(values[lo:hi].mean())


def by_outline(s: Silhouette) -> CategoryGuess:
    """The category a studio silhouette points to (``other`` when none fits). The rules read
    proportions a person would name the product by: legs, sleeves, a neck, a handle's loop."""
    sp, ru, cv = s.spans, s.runs, s.cover
    lower_runs, lower_cover = _band(ru, 5, 9), _band(cv, 5, 9)
    narrow = sp < 0.6
    if s.fill < 0.35 and _band(ru, 2, 8) >= 1.6 and _band(cv, 2, 8) < 0.5:
        return CategoryGuess(Category.JEWELRY, 0.5, "outline: a thin loop (ring, necklace)")
    if lower_runs >= 2.6 and lower_cover > 0.6:
        return CategoryGuess(Category.CLOTHING, 0.55, "outline: two long sleeves beside a body")
    if lower_runs >= 2.2 and lower_cover < 0.55:
        return CategoryGuess(Category.FURNITURE, 0.5, "outline: thin legs under a seat or top")
    if lower_runs >= 1.7 and lower_cover > 0.6 and s.aspect > 1.2 and s.hole < 0.05:
        return CategoryGuess(Category.CLOTHING, 0.6, "outline: two legs (trousers)")
    if float(sp[3:9].min()) < 0.2 and float(sp[0:3].max()) > 0.5:
        return CategoryGuess(Category.FURNITURE, 0.45, "outline: a shade on a thin stem (lamp)")
    if s.aspect > 2.5 and float(sp[3:7].max()) > 1.3 * max(_band(sp, 0, 2), _band(sp, 8, 10)):
        return CategoryGuess(Category.WATCHES, 0.5, "outline: a strap with a dial")
    if _band(ru, 1, 3) >= 1.7 and _band(cv, 1, 3) < 0.3 and _band(sp, 4, 9) > 0.75:
        return CategoryGuess(Category.BAGS, 0.5, "outline: a handle above a wide body")
    if s.hole >= 0.04:
        if s.hole_y < 0.35 and 0.3 < s.hole_x < 0.7:
            return CategoryGuess(Category.BAGS, 0.55, "outline: a handle's loop above a body")
        if s.hole_x > 0.65 or s.hole_x < 0.35:
            return CategoryGuess(Category.HOUSEWARE, 0.45, "outline: a handle at the side (mug)")
        return CategoryGuess(Category.JEWELRY, 0.4, "outline: a ring around a hole")
    if float(sp[1:3].max()) > 0.85 and _band(sp, 5, 9) < 0.72 and s.aspect < 1.4:
        return CategoryGuess(Category.CLOTHING, 0.6, "outline: sleeves wider than the body")
    if (
        s.aspect > 1.5
        and bool(narrow[0])
        and _band(sp, 6, 10) > 0.75
        and float(sp[5:10].std()) < 0.08
    ):
        neck = sp[:3]  # a straight neck over the top 30 %: a wine or beer bottle
        if float(neck.max()) < 0.35 and float(neck.std()) < 0.03 and s.aspect > 2.6:
            return CategoryGuess(Category.FOOD, 0.4, "outline: a bottle with a long neck")
        return CategoryGuess(Category.BEAUTY, 0.4, "outline: a bottle with a cap or pump")
    if s.aspect > 1.3 and float(sp[7:10].max()) - float(sp[1:5].min()) > 0.35 and sp[0] < 0.5:
        return CategoryGuess(Category.CLOTHING, 0.5, "outline: a narrow top flaring down (dress)")
    if s.aspect < 0.8:
        if s.symmetry < 0.7:
            return CategoryGuess(Category.SHOES, 0.5, "outline: low and one-sided (shoe)")
        if s.tone < 70 and float(sp[8:10].max()) > _band(sp, 3, 6) + 0.08:
            return CategoryGuess(Category.ELECTRONICS, 0.4, "outline: a screen on a base (laptop)")
        if s.fill > 0.8 and s.symmetry > 0.8:
            return CategoryGuess(Category.BEAUTY, 0.3, "outline: a wide lidded jar or box")
    if 1.4 < s.aspect < 2.4 and s.fill > 0.8 and s.solidity > 0.95:
        if s.tone < 70:
            return CategoryGuess(Category.ELECTRONICS, 0.45, "outline: a dark slab (phone)")
        return CategoryGuess(Category.FOOD, 0.3, "outline: an upright cylinder (can)")
    return CategoryGuess(Category.OTHER, 0.2, "outline: no product shape we know")


def _tokens(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def by_keywords(words: set[str]) -> Category | None:
    """The category most words point to (ties: alphabetical), or ``None``."""
    scores = {c: len(words & keys) for c, keys in PRODUCT_KEYWORDS.items() if words & keys}
    return max(sorted(scores), key=lambda c: scores[c]) if scores else None


def classify(
    rgb: npt.NDArray[np.uint8],
    mask: Mask,
    *,
    text: list[str],
    face_share: float,
    person: bool,
) -> CategoryGuess:
    """The product's category from what the picture shows, strongest cue first (see the module
    docstring). ``face_share``: the largest face's share of the picture; ``person``: a figure
    with a face was found."""
    read = by_keywords(_tokens(" ".join(text)))
    if read is not None:
        return CategoryGuess(read, 0.7, f"keywords read on the product: {' '.join(text)[:80]}")
    if face_share > 0.02:
        return CategoryGuess(Category.OTHER, 0.6, "a person's portrait, not a product")
    if person:
        return CategoryGuess(Category.CLOTHING, 0.5, "a person wears it")
    outline = silhouette(rgb, mask)
    if outline is None or not outline.plain_background:
        return CategoryGuess(Category.OTHER, 0.2, "not a studio product shot: a scene")
    return by_outline(outline)


def named(guess: CategoryGuess, filename: str | None) -> CategoryGuess:
    """``guess`` weighed against the file name, a weak hint: agreeing, it adds confidence; it
    wins only over a guess below 0.4 (an unknown outline, a scene)."""
    hint = by_keywords(_tokens(filename or ""))
    if hint is None:
        return guess
    if hint is guess.category:
        return CategoryGuess(hint, min(0.8, guess.confidence + 0.2), guess.method + "; the name")
    if guess.confidence < 0.4:
        return CategoryGuess(hint, 0.35, f"the file name: {filename}")
    return guess


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


PRODUCT_KEYWORDS: dict[Category, frozenset[str]] = {
    Category.CLOTHING: _words(
        "cotton polyester linen wool denim shirt tshirt tee dress jacket hoodie sweater jeans "
        "pants trousers skirt sock socks size xs xl xxl fit wear apparel"
    ),
    Category.JEWELRY: _words(
        "gold silver 925 sterling carat ct karat 14k 18k diamond ring necklace bracelet "
        "earring earrings pendant jewelry jewellery gem"
    ),
    Category.FURNITURE: _words(
        "chair table sofa couch desk shelf wardrobe bed oak walnut upholstered furniture "
        "cabinet stool lamp"
    ),
    Category.BEAUTY: _words(
        "serum cream lotion moisturizer moisturiser spf shampoo conditioner lipstick mascara "
        "perfume parfum eau toilette skincare cosmetic cosmetics balm cleanser toner vitamin "
        "hyaluronic retinol ml"
    ),
    Category.HOUSEWARE: _words(
        "mug cup plate bowl kitchen cookware pan pot candle vase towel dishwasher microwave "
        "safe ceramic stainless steel bpa"
    ),
    Category.ELECTRONICS: _words(
        "usb wireless bluetooth hd 4k battery mah charger hdmi wifi smart led watt volts "
        "speaker headphones camera phone laptop"
    ),
    Category.FOOD: _words(
        "organic chocolate coffee tea snack juice sugar protein calories gluten vegan flavor "
        "flavour recipe honey milk bread sauce water aqua natural nutrition ingredients wine beer"
    ),
    Category.SHOES: _words("shoe shoes sneaker sneakers boot boots sandal sandals heels trainers"),
    Category.BAGS: _words("bag handbag tote backpack purse clutch satchel"),
    Category.WATCHES: _words("watch wristwatch chronograph"),
}
"""Words that, read on a product or in its file name, point to its category."""
