"""The output controls of a cut-out, in remove.bg's vocabulary: subject type, crop and margin,
output size, subject scale and position, a background colour or image, a shadow, the alpha
channel alone, the file format, and marketplace presets.

The parameter models here are mixins: ``background_removal`` takes all of them,
``make_transparent`` those that make sense without a new background, ``replace_background``
the subject type and the quality. Each field is defined once, here, with its default and
description, so the v2 request models and the multipart forms document it from one place.

:func:`resolve_cutout` turns the parsed strings into a :class:`CutoutSpec` (a preset's values
filled in wherever the caller did not set a field), and :func:`cutout_conflicts` names the
combinations that cannot be honoured; the engines raise those before anything is charged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from PIL import ImageColor
from pydantic import BaseModel, Field, field_validator

SubjectType = Literal["auto", "person", "product", "car", "object"]
ShadowKind = Literal["soft", "hard", "floating"]
Channels = Literal["rgba", "alpha"]
FileFormat = Literal["auto", "png", "jpg", "webp"]
PresetName = Literal["amazon", "shopify", "etsy"]
Rgb8 = tuple[int, int, int]

MAX_CANVAS_SIDE = 10_000
MAX_CANVAS_PIXELS = 25_000_000
"""An exact ``WxH`` is at most 10 000 px a side and 25 MP (the largest remove.bg and Shopify
accept; the composite then needs about 0.5 GB)."""

SIZE_LIMITS: dict[str, float | None] = {
    "preview": 0.25e6,
    "small": 0.25e6,
    "regular": 0.25e6,
    "medium": 1.5e6,
    "hd": 4e6,
    "full": None,
    "4k": None,
    "50mp": None,
    "auto": None,
}
"""Named sizes and the megapixels they are reduced to (``None``: the image's own size).
``small``, ``regular``, ``medium``, ``hd``, ``4k`` and ``50MP`` are remove.bg's older names,
accepted so that a migrating client need not change them."""

_SIZE = re.compile(r"^(?:(?P<w>\d{1,5})x(?P<h>\d{1,5})|(?P<name>[a-z0-9]+))$")
_PERCENT = r"\d{1,3}(?:\.\d+)?%"
_SCALE = re.compile(rf"^(?:original|{_PERCENT})$")
_POSITION = re.compile(rf"^(?:original|center|centre|{_PERCENT}(?:\s+{_PERCENT})?)$")
_MARGIN_VALUE = re.compile(r"^(?P<num>\d{1,4}(?:\.\d+)?)(?P<unit>px|%)?$")
_HEX = re.compile(r"^#?(?P<hex>[0-9a-f]{3}|[0-9a-f]{6})$")


@dataclass(frozen=True)
class Preset:
    """A marketplace's main-image rules, as the values of our parameters."""

    name: str
    width: int
    height: int
    bg_color: Rgb8
    scale: float
    rule: str
    """Where the numbers come from (documented in docs/engines.md)."""


PRESETS: dict[str, Preset] = {
    "amazon": Preset(
        "amazon",
        2000,
        2000,
        (255, 255, 255),
        0.85,
        "Amazon main image: pure white background (RGB 255,255,255), the product fills 85 % of "
        "the frame, at least 1000 px on the longest side for zoom",
    ),
    "shopify": Preset(
        "shopify",
        2048,
        2048,
        (255, 255, 255),
        0.80,
        "Shopify: 2048×2048 for square product images; white and 80 % fill are our choice",
    ),
    "etsy": Preset(
        "etsy",
        2000,
        1600,
        (255, 255, 255),
        0.80,
        "Etsy: listing photos at least 2000 px wide, thumbnails cropped towards 5:4 / 4:3; "
        "white and 80 % fill are our choice",
    ),
}


def _check(pattern: re.Pattern[str], value: str, what: str) -> str:
    text = value.strip().lower()
    if not pattern.match(text):
        raise ValueError(f"{value!r} is not {what}")
    return text


class SubjectParams(BaseModel):
    """Which kind of subject to cut out."""

    type: SubjectType = Field(
        "auto",
        description=(
            "auto: a person when a face and a person are found, else any salient object "
            "(reported in details.detected_type); person: MediaPipe selfie segmentation fused "
            "with the salient mask (hair, hands and held objects kept; other salient things "
            "dropped); product: the single largest salient object; car / object: every salient "
            "object (the mask alone)"
        ),
    )


class CropParams(BaseModel):
    """Crop the result to the subject."""

    crop: bool = Field(False, description="crop to the subject (plus crop_margin)")
    crop_margin: str = Field(
        "0",
        description=(
            "margin around the cropped subject: 1, 2 or 4 values (CSS order: top right bottom "
            "left), each '30px' or '10%' of the subject's size on that axis; at most 500px or "
            "50 %; used with crop=true only"
        ),
        examples=["10%", "30px", "5% 10%"],
    )

    @field_validator("crop_margin")
    @classmethod
    def _margin(cls, value: str) -> str:
        parse_margin(value)
        return value.strip().lower()


class PlacementParams(BaseModel):
    """Output size and where the subject goes on it."""

    size: str = Field(
        "full",
        description=(
            "preview (at most 0.25 MP), full (the input's size, or the crop's), auto (= full), "
            "or an exact WxH such as 2000x2000 (at most 10000 a side and 25 MP); remove.bg's "
            "small / regular / medium (1.5 MP) / hd (4 MP) / 4k / 50MP are accepted too"
        ),
        examples=["full", "preview", "2000x2000"],
    )
    scale: str = Field(
        "original",
        description=(
            "the subject's size relative to the canvas, '10%'..'100%' (its bounding box fills "
            "that fraction of the canvas in the limiting direction), or original"
        ),
        examples=["85%"],
    )
    position: str | None = Field(
        None,
        description=(
            "center, original (the subject's centre keeps its relative place), or 'x% y%' "
            "(0% 0% = top left, 100% 100% = bottom right; one value sets both); default: center "
            "when scale or an exact WxH is set, else original"
        ),
        examples=["center", "50% 100%"],
    )

    @field_validator("size")
    @classmethod
    def _size(cls, value: str) -> str:
        parse_size(value)
        return value.strip().lower()

    @field_validator("scale")
    @classmethod
    def _scale(cls, value: str) -> str:
        text = _check(_SCALE, value, "a percentage ('85%') or 'original'")
        if text != "original" and not 10.0 <= float(text[:-1]) <= 100.0:
            raise ValueError("scale must be between 10% and 100%")
        return text

    @field_validator("position")
    @classmethod
    def _position(cls, value: str | None) -> str | None:
        if value is None:
            return None
        text = _check(_POSITION, value, "center, original or 'x% y%'")
        if text not in ("center", "centre", "original") and any(
            float(p[:-1]) > 100.0 for p in text.split()
        ):
            raise ValueError("position percentages must be between 0% and 100%")
        return text


class FillParams(BaseModel):
    """A new background behind the subject, or a marketplace preset."""

    bg_color: str | None = Field(
        None,
        description=(
            "an opaque background colour: hex ('ffffff', '#fff') or a CSS colour name "
            "('white', 'rebeccapurple'); the result is then opaque (JPEG with format=auto)"
        ),
        examples=["ffffff", "#f5f5f5", "lightgray"],
    )
    bg_image_url: str | None = Field(
        None,
        description=(
            "a background photo by URL (fetched with the same SSRF checks as the input), "
            "scaled to cover the canvas and centred"
        ),
    )
    bg_image_base64: str | None = Field(
        None, description="a background photo as base64 (wins over bg_image_url)"
    )
    preset: PresetName | None = Field(
        None,
        description=(
            "a marketplace's main-image rules: amazon (2000x2000, #FFFFFF, subject 85 % of the "
            "longer side), shopify (2048x2048, white, 80 %), etsy (2000x1600, white, 80 %); "
            "explicit size, scale, position and background parameters override it"
        ),
    )

    @field_validator("bg_color")
    @classmethod
    def _colour(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parse_colour(value)
        return value.strip().lower()


class ShadowParams(BaseModel):
    """A shadow under the subject."""

    add_shadow: bool = Field(False, description="add a shadow (soft unless shadow says otherwise)")
    shadow: ShadowKind | None = Field(
        None,
        description=(
            "soft: a contact shadow and a wide, pale cast shadow on the floor; hard: the same, "
            "much darker (one strong light); floating: the subject hovers over a detached soft "
            "shadow. Setting it implies add_shadow. Drawn on the background, or kept as "
            "semi-transparent black pixels in a transparent PNG; none when the subject's base "
            "touches the bottom edge"
        ),
    )


class ChannelParams(BaseModel):
    """Colour and alpha, or the matte alone."""

    channels: Channels = Field(
        "rgba",
        description="rgba: the cut-out; alpha: the matte only, as a greyscale PNG",
    )


class QualityParams(BaseModel):
    """Compression quality of lossy output formats."""

    quality: int = Field(
        95, ge=1, le=100, description="JPEG / WebP quality (WebP 100 = lossless); PNG ignores it"
    )


class FormatParams(QualityParams):
    """The file format of the result."""

    format: FileFormat = Field(
        "auto",
        description=(
            "auto: PNG when the result has transparency, JPEG when it is opaque (a bg_color, "
            "a bg_image or a preset); png, jpg (transparent areas flattened onto white) or webp"
        ),
    )


class CutoutOutputParams(FormatParams, ChannelParams, ShadowParams, PlacementParams, CropParams):
    """Every output control except a new background (``make_transparent`` takes these).
    (Pydantic lists a model's fields from its last base to its first: crop comes first.)"""


# --- parsing ---------------------------------------------------------------------------------


Margin = tuple[float, bool]
"""A margin value and whether it is relative (a fraction of the subject's size)."""


def parse_margin(value: str) -> tuple[Margin, Margin, Margin, Margin]:
    """``crop_margin`` as (top, right, bottom, left); raises ``ValueError``."""
    parts = value.strip().lower().split()
    if not 1 <= len(parts) <= 4:
        raise ValueError("crop_margin takes 1 to 4 values")
    values: list[Margin] = []
    for part in parts:
        m = _MARGIN_VALUE.match(part)
        if m is None:
            raise ValueError(f"{part!r} is not a margin such as '30px' or '10%'")
        number, relative = float(m["num"]), m["unit"] == "%"
        if (relative and number > 50) or (not relative and number > 500):
            raise ValueError("a margin is at most 500px or 50%")
        values.append((number / 100.0 if relative else number, relative))
    if len(values) == 1:
        values *= 4
    elif len(values) == 2:
        values = [values[0], values[1], values[0], values[1]]
    elif len(values) == 3:
        values = [values[0], values[1], values[2], values[1]]
    return values[0], values[1], values[2], values[3]


def parse_size(value: str) -> float | tuple[int, int] | None:
    """``size`` as a megapixel cap (``None``: unchanged) or an exact ``(width, height)``."""
    text = value.strip().lower()
    m = _SIZE.match(text)
    if m is None or (m["name"] is not None and m["name"] not in SIZE_LIMITS):
        raise ValueError(f"{value!r} is not preview, full, auto or WxH (for example 2000x2000)")
    if m["name"] is not None:
        return SIZE_LIMITS[m["name"]]
    w, h = int(m["w"]), int(m["h"])
    if not (16 <= w <= MAX_CANVAS_SIDE and 16 <= h <= MAX_CANVAS_SIDE):
        raise ValueError(f"each side of size must be between 16 and {MAX_CANVAS_SIDE} pixels")
    if w * h > MAX_CANVAS_PIXELS:
        raise ValueError(f"size is at most {MAX_CANVAS_PIXELS // 1_000_000} megapixels")
    return (w, h)


def parse_colour(value: str) -> Rgb8:
    """A hex colour (3 or 6 digits, ``#`` optional) or a CSS colour name as RGB."""
    text = value.strip().lower()
    m = _HEX.match(text)
    if m is not None:
        digits = m["hex"]
        if len(digits) == 3:
            digits = "".join(c * 2 for c in digits)
        return (int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16))
    if text in ImageColor.colormap:
        r, g, b = ImageColor.getrgb(text)[:3]
        return (int(r), int(g), int(b))
    raise ValueError(
        f"{value!r} is not a colour: use hex such as 'ffffff' or '#fff', or a CSS colour name"
    )


def parse_position(value: str) -> Literal["center", "original"] | tuple[float, float]:
    """``position`` as a keyword or ``(x, y)`` fractions."""
    text = value.strip().lower()
    if text in ("center", "centre"):
        return "center"
    if text == "original":
        return "original"
    parts = [float(p[:-1]) / 100.0 for p in text.split()]
    return (parts[0], parts[-1])


# --- the resolved specification ------------------------------------------------------------


@dataclass(frozen=True)
class CutoutSpec:
    """What to make of a cut-out, every option parsed and a preset applied."""

    crop: bool = False
    margin: tuple[Margin, Margin, Margin, Margin] = ((0.0, False),) * 4
    legacy_crop: bool = False
    """``crop_to_object``: the old behaviour (2 % of the long side, clipped to the image)."""
    size: float | tuple[int, int] | None = None
    scale: float | None = None
    position: Literal["center", "original"] | tuple[float, float] = "original"
    bg_color: Rgb8 | None = None
    bg_image: bool = False
    shadow: ShadowKind | None = None
    channels: Channels = "rgba"
    format: FileFormat = "auto"
    preset: str | None = None

    @property
    def changes_geometry(self) -> bool:
        """Whether the canvas or the subject's place on it differs from the input's."""
        return (
            self.crop
            or self.size is not None
            or self.scale is not None
            or self.position != "original"
        )

    @property
    def is_plain(self) -> bool:
        """Whether the result is the cut-out as it comes (the fast path)."""
        return not (
            self.changes_geometry
            or self.bg_color is not None
            or self.bg_image
            or self.shadow is not None
            or self.channels != "rgba"
        )

    @property
    def opaque(self) -> bool:
        """Whether the result has a background (no transparency left)."""
        return self.bg_color is not None or self.bg_image


def _given(params: BaseModel, name: str) -> bool:
    return name in params.model_fields_set


def resolve_cutout(params: BaseModel) -> CutoutSpec:
    """The :class:`CutoutSpec` of any model built from the mixins above (fields a model lacks
    keep their defaults). A preset fills size, scale, position and the background colour
    wherever the caller did not set that field (or a background image)."""
    spec: dict[str, object] = {}
    if isinstance(params, CropParams):
        spec["crop"] = params.crop
        spec["margin"] = parse_margin(params.crop_margin)
    spec["legacy_crop"] = bool(getattr(params, "crop_to_object", False))
    preset: Preset | None = None
    if isinstance(params, FillParams):
        preset = PRESETS[params.preset] if params.preset else None
        spec["bg_image"] = bool(params.bg_image_base64 or params.bg_image_url)
        if params.bg_color is not None:
            spec["bg_color"] = parse_colour(params.bg_color)
        elif preset is not None and not spec["bg_image"]:
            spec["bg_color"] = preset.bg_color
        spec["preset"] = params.preset
    if isinstance(params, PlacementParams):
        size = parse_size(params.size)
        if preset is not None and not _given(params, "size"):
            size = (preset.width, preset.height)
        scale = None if params.scale == "original" else float(params.scale[:-1]) / 100.0
        if preset is not None and not _given(params, "scale"):
            scale = preset.scale
        spec["size"] = size
        spec["scale"] = scale
        if params.position is not None:
            spec["position"] = parse_position(params.position)
        elif scale is not None or isinstance(size, tuple):
            spec["position"] = "center"
    if isinstance(params, ShadowParams) and (params.add_shadow or params.shadow is not None):
        spec["shadow"] = params.shadow or "soft"
    if isinstance(params, ChannelParams):
        spec["channels"] = params.channels
    if isinstance(params, FormatParams):
        spec["format"] = params.format
    return CutoutSpec(**spec)  # type: ignore[arg-type]


def cutout_conflicts(params: BaseModel) -> list[str]:
    """The combinations of ``params`` that cannot be honoured together, each as a sentence
    naming the fields (empty when there are none)."""
    problems: list[str] = []
    fill = params if isinstance(params, FillParams) else None
    has_image = fill is not None and bool(fill.bg_image_base64 or fill.bg_image_url)
    if fill is not None and fill.bg_color is not None and has_image:
        problems.append("bg_color and bg_image_url / bg_image_base64 both set a background")
    if isinstance(params, ChannelParams) and params.channels == "alpha":
        given = []
        if fill is not None and fill.bg_color is not None:
            given.append("bg_color")
        if has_image:
            given.append("bg_image_url / bg_image_base64")
        if fill is not None and fill.preset is not None:
            given.append("preset")
        if isinstance(params, ShadowParams) and (params.add_shadow or params.shadow):
            given.append("add_shadow / shadow")
        if isinstance(params, FormatParams) and params.format in ("jpg", "webp"):
            given.append(f"format={params.format}")
        if given:
            problems.append(
                "channels=alpha returns the matte alone as a greyscale PNG, so it cannot be "
                f"combined with {', '.join(given)}"
            )
    if (
        isinstance(params, ShadowParams)
        and params.shadow is not None
        and _given(params, "add_shadow")
        and not params.add_shadow
    ):
        problems.append("shadow is set but add_shadow=false")
    if isinstance(params, CropParams) and params.crop and getattr(params, "crop_to_object", False):
        problems.append("crop and crop_to_object both crop: use crop (with crop_margin)")
    return problems
