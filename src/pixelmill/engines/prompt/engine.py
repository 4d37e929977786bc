"""Image-to-prompt: text-to-image prompts written from the image's analysis facts.

No captioning or CLIP model is available offline, so the prompts are *templates filled from
measurements* (:func:`pixelmill.engines.analyze.analyze_image`): who or what we could detect
(people, faces, text, QR codes, a main object), the named palette, lighting, composition,
mood, photo vs flat graphic, and the aspect ratio. They describe the picture's look and layout
well; they cannot name objects we cannot recognise (a cat is "a main subject").

Four variants, in the shapes the public clients read: ``general`` (a plain sentence),
``flux`` (descriptive natural language, which FLUX follows best), ``midjourney`` (comma
phrases with ``--ar`` and ``--style raw`` / ``--stylize`` parameters) and ``stable_diffusion``
(``positive`` tag list and a ``negative`` prompt).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, ClassVar

from pydantic import BaseModel

from pixelmill.engines.analyze import analyze_image, load_models
from pixelmill.engines.base import BaseEngine, EngineInputs, EngineResult

COMMON_RATIOS = ((1, 1), (4, 5), (5, 4), (3, 2), (2, 3), (4, 3), (3, 4), (16, 9), (9, 16), (21, 9))
"""Aspect ratios generators are used to; an image within 3 % of one gets that one."""

LIGHTING_PHRASES = {
    "backlit": "backlit with a bright background and rim light",
    "low-key": "low-key lighting with deep shadows",
    "high-key": "bright high-key lighting",
    "high-contrast": "dramatic high-contrast lighting",
    "even": "soft, even lighting",
    "bright": "bright natural light",
    "natural": "natural light",
}

COMPOSITION_PHRASES = {
    "close-up": "close-up framing",
    "centered": "centered composition",
    "rule_of_thirds": "rule-of-thirds composition",
    "left-weighted": "subject placed left of centre",
    "right-weighted": "subject placed right of centre",
    "symmetrical": "symmetrical composition",
    "open": "open, wide composition",
}


def aspect_ratio(width: int, height: int) -> str:
    """``"W:H"`` for Midjourney's ``--ar``: a common ratio when within 3 %, else the reduced
    fraction with terms up to 21."""
    actual = width / height
    for w, h in COMMON_RATIOS:
        if abs(actual / (w / h) - 1.0) < 0.03:
            return f"{w}:{h}"
    best = min(
        (Fraction(max(1, round(actual * d)), d) for d in range(1, 22) if round(actual * d) <= 21),
        key=lambda f: (abs(float(f) / actual - 1.0), f.denominator),
        default=Fraction(width, height).limit_denominator(21),
    )
    return f"{best.numerator}:{best.denominator}"


def _subject(a: dict[str, Any]) -> str:
    cats: list[str] = a.get("categories", [])
    detections: list[dict[str, Any]] = a.get("detections", [])
    people = sum(1 for d in detections if d["label"] == "person")
    faces = sum(1 for d in detections if d["label"] == "face")
    n = max(people, faces)
    if n == 1:
        subject = "a person"
    elif n > 1:
        subject = f"a group of {n} people"
    elif "document" in cats:
        subject = "a printed page of text"
    elif "product" in cats:
        subject = "a single object on a plain studio background"
    elif "landscape" in cats:
        subject = "a wide outdoor scene"
    elif any(d["label"] == "main_object" for d in detections):
        subject = "a single main subject"
    else:
        subject = "a scene"
    text = a.get("text_detected", [])
    if text:
        quoted = ", ".join(f'"{t}"' for t in text[:3])
        subject += f" with the text {quoted}"
    if any(d["label"] == "qr_code" for d in detections):
        subject += " and a QR code"
    return subject


def _colours(a: dict[str, Any], n: int = 3) -> list[str]:
    names: list[str] = []
    for c in a.get("colors", []):
        if c["name"] not in names:
            names.append(c["name"])
    return names[:n]


def _article(noun: str) -> str:
    return "an" if noun[:1] in "aeiou" else "a"


def _join(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def build_prompts(a: dict[str, Any]) -> dict[str, Any]:
    """The four prompt variants from an :func:`~pixelmill.engines.analyze.analyze_image`
    result."""
    style = str(a.get("style", "photo"))
    medium = {
        "graphic": "flat digital illustration",
        "monochrome photo": "black and white photograph",
    }.get(style, "photograph")
    kind = next(
        (c for c in a.get("categories", []) if c in ("portrait", "product", "landscape")), None
    )
    if kind and style != "graphic":
        medium = f"{kind} {medium}"
    subject = _subject(a)
    comp = a.get("composition", {})
    lighting = LIGHTING_PHRASES.get(str(comp.get("lighting", "natural")), "natural light")
    framing = COMPOSITION_PHRASES.get(str(comp.get("type", "open")), "balanced composition")
    colours = _colours(a)
    palette = f"{_join(colours)} colour palette" if colours else "neutral colour palette"
    mood = str(a.get("mood", "balanced and natural"))
    quality = a.get("quality_assessment", {})
    sharp = quality.get("sharpness") == "sharp"
    orientation = str(comp.get("orientation", "square"))
    ratio = aspect_ratio(int(a["width"]), int(a["height"]))

    opening = f"{_article(medium).capitalize()} {medium} of {subject}"
    general = f"{opening}, {framing}, {palette}, {lighting}, {mood} mood."
    detail = "Crisp focus and fine detail." if sharp else "Soft focus."
    flux = (
        f"{opening}. The image uses {framing} in {orientation} format. "
        f"The colours are dominated by {_join(colours) or 'neutral tones'}, and the scene has "
        f"{lighting}. The overall mood is {mood}. {detail}"
    )
    # Raw style keeps Midjourney close to photographic output; graphics want its stylisation.
    mj_style = "--stylize 100" if style == "graphic" else "--style raw"
    mj_params = f"--ar {ratio} {mj_style}"
    midjourney = f"{subject}, {medium}, {framing}, {palette}, {lighting}, {mood} mood {mj_params}"
    tags = [subject, medium, framing, palette, lighting, f"{mood} mood"]
    if style == "graphic":
        tags += ["clean vector shapes", "flat colours"]
        negative = ["photo", "photorealistic", "noise", "blurry", "jpeg artifacts", "watermark"]
    else:
        tags += ["photorealistic", "highly detailed", "sharp focus" if sharp else "soft focus"]
        negative = ["cartoon", "illustration", "3d render", "blurry", "lowres", "jpeg artifacts"]
        negative += ["overexposed", "underexposed", "watermark"]
    if style == "monochrome photo":
        negative.append("color")
    if not a.get("text_detected"):
        negative.append("text")
    if any(d["label"] in ("person", "face") for d in a.get("detections", [])):
        negative += ["deformed face", "extra fingers", "bad anatomy"]
    return {
        "general": general,
        "flux": flux,
        "midjourney": midjourney,
        "stable_diffusion": {"positive": ", ".join(tags), "negative": ", ".join(negative)},
    }


ANALYSIS_KEYS = (
    "width",
    "height",
    "objects",
    "colors",
    "mood",
    "composition",
    "categories",
    "style",
    "text_detected",
)
"""The part of the analysis returned next to the prompts (what they were built from)."""


class ImageToPromptParams(BaseModel):
    """``image_to_prompt`` takes no options."""


class ImageToPromptEngine(BaseEngine[ImageToPromptParams]):
    """``image_to_prompt``: general, FLUX, Midjourney and Stable Diffusion prompts."""

    name: ClassVar[str] = "image_to_prompt"
    Params: ClassVar[type[BaseModel]] = ImageToPromptParams

    def _load(self) -> None:
        """Load the analysis models once."""
        load_models()

    def _run(self, inputs: EngineInputs, params: ImageToPromptParams) -> EngineResult:
        facts = analyze_image(inputs.image)
        prompts = build_prompts(facts)
        details = {
            "method": (
                "template prompts filled from classical image analysis (detected people/faces/"
                "text/QR/main object, named palette, lighting, composition, mood, aspect "
                "ratio); no captioning or CLIP model, so objects are not named"
            ),
            "prompts": prompts,
            "analysis": {k: facts[k] for k in ANALYSIS_KEYS},
        }
        return EngineResult(images=[], details=details)
