"""The edit prompt interpreter: free text -> an ordered list of concrete edit steps.

It is a small rule-based grammar, not a language model. The prompt is lower-cased, fixed
phrases that contain "and" are protected ("black and white"), and it is split into clauses at
commas, semicolons, full stops, "and", "then" and "also". Each clause is matched against, in
order: background removal, background replacement with an explicit target, background blur,
recolouring an object ("make the car red"), a named art style, black and white / sepia, then
every tonal adjustment word it contains (warmer, brighter, more contrast, ...), which may be
limited to the background or the subject. Intensity words scale a step ("slightly" ×0.5,
"very" ×1.5) and "less"/"reduce" flip an adjustment. A clause that matches nothing right after
a background replacement continues its description ("a beach with sand and palm trees").

:func:`interpret` is pure and cheap (no image, no model), so the pipeline can run it to reject
a meaningless prompt before any credit is reserved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from pixelmill.engines.replace_background import parse_backdrop_prompt
from pixelmill.engines.runtime.palette import COLOR_PHRASE

StepKind = Literal[
    "replace_background",
    "remove_background",
    "blur_background",
    "recolor",
    "warmth",
    "brightness",
    "contrast",
    "saturation",
    "monochrome",
    "sepia",
    "style",
    "sharpen",
    "vignette",
]
Region = Literal["image", "background", "subject"]

STYLES: tuple[str, ...] = (
    "cinematic",
    "anime",
    "oil_painting",
    "watercolor",
    "sketch",
    "pop_art",
    "cyberpunk",
    "vintage",
)
"""Style names, as the style-transfer engine spells them."""

EXAMPLES: tuple[str, ...] = (
    "replace the background with a marble countertop",
    "remove the background",
    "blur the background",
    "make the car red",
    "make it warmer and brighter",
    "more contrast, slightly more saturated",
    "black and white",
    "sepia",
    "turn it into an oil painting (or: anime, watercolor, sketch, pop art, cyberpunk, "
    "vintage, cinematic)",
    "sharpen",
    "add a vignette",
)
"""Prompts the interpreter understands, shown to users when a prompt is not understood."""


@dataclass(frozen=True)
class EditStep:
    """One edit. ``amount`` is signed (+1 warmer, -1 cooler) and already includes intensity
    words; ``value`` is the backdrop description (``replace_background``), colour phrase
    (``recolor``) or style name (``style``); ``target`` is the object to recolour (``None`` for
    the main subject, ``"image"`` for the whole picture); ``region`` limits a tonal adjustment.
    """

    kind: StepKind
    amount: float = 1.0
    value: str | None = None
    target: str | None = None
    region: Region = "image"

    @property
    def description(self) -> str:
        """A short human-readable statement of what the step does."""
        return _describe(self)


class PromptNotUnderstood(ValueError):
    """Nothing in the prompt maps to an edit this engine can make."""


# --- vocabulary ------------------------------------------------------------------------------

_BG = r"(?:background|backdrop|bg|back ground|scenery|setting|surroundings)"
_PROTECT: tuple[tuple[str, str], ...] = (
    (r"\bblack\s*(?:and|&|n)\s*white\b|\bb\s*&\s*w\b|\bb/w\b", "monochrome"),
    (r"\bteal\s*(?:and|&)\s*orange\b", "cinematic"),
)
_SPLIT = re.compile(r"\s*(?:[,;.!]|\band\b|\bthen\b|\balso\b|\bplus\b|&)\s*")

_REMOVE_BG = re.compile(
    r"\b(?:remove|delete|erase|drop|lose|clear|strip|get rid of|take out|take away|cut out|"
    r"no)\b.*\b" + _BG + r"\b"
    r"|\btransparent\b|\bcut ?out\b|\bisolate\b"
)
_BLUR_WORDS = (
    r"blur(?:red|ry)?|defocus(?:ed)?|out of focus|unfocused|soft focus|bokeh|portrait mode|"
    r"depth of field|dof"
)
_BLUR_BG = re.compile(
    r"\b(?:" + _BLUR_WORDS + r")\b.*\b" + _BG + r"\b"
    r"|\b" + _BG + r"\b.*\b(?:" + _BLUR_WORDS + r")\b"
    r"|\bportrait mode\b|\b(?:shallow )?depth of field\b"
)
_REPLACE_EXPLICIT = re.compile(
    r"\b(?:replace|change|swap|switch|set|turn|make|use|give)\b.*?\b" + _BG + r"\b"
    r"(?:\s+(?:with|to|into|for|as|in|of|be|is|should be|like|by))+\s+(?P<what>.+)"
)
_MAKE_BG = re.compile(
    r"\b(?:make|turn|paint|colou?r|change)\b\s+(?:the\s+|its\s+|his\s+|her\s+)?"
    + _BG
    + r"\s+(?P<what>.+)"
)
_PLACE_ON = re.compile(
    r"\b(?:put|place|set|show|move|stand|photograph|shoot|render)\b.*?"
    r"\b(?:on|in|at|against|onto|into|by|in front of|over)\s+(?P<what>.+)"
)
_NOUN_BG = re.compile(r"(?P<what>.+?)\s+" + _BG + r"\b")
_WHOLE = {"image", "photo", "picture", "everything", "whole image", "whole thing",
          "entire image", "whole photo", "entire photo", "shot", "scene"}  # fmt: skip
_MAIN = {"it", "this", "that", "object", "subject", "product", "item", "main object"}
_RECOLOR = re.compile(
    r"\b(?:make|turn|paint|colou?r|recolou?r|change|dye|tint|switch)\b\s+"
    r"(?:the\s+|his\s+|her\s+|its\s+|their\s+|my\s+|this\s+|that\s+)?"
    r"(?P<obj>[a-z][a-z ]*?)\s+"
    r"(?:colou?r\s+)?(?:to\s+|into\s+|in\s+)?(?:be\s+)?(?:a\s+|an\s+)?"
    r"(?P<color>" + COLOR_PHRASE + r")\b"
)
_RECOLOR_OF = re.compile(
    r"\bcolou?r\s+of\s+(?:the\s+|his\s+|her\s+|its\s+|my\s+)?(?P<obj>[a-z][a-z ]*?)\s+"
    r"(?:to|into|in)\s+(?P<color>" + COLOR_PHRASE + r")\b"
)
_STYLE_WORDS: tuple[tuple[str, str], ...] = (
    (r"anime|manga|cartoon|cel shad(?:ed|ing)|ghibli", "anime"),
    (r"oil paint(?:ing|ed)?|oil on canvas|painterly|impasto|van gogh", "oil_painting"),
    (r"water ?colou?rs?", "watercolor"),
    (r"sketch(?:ed|y)?|pencil(?: drawing)?|line art|drawing|charcoal drawing", "sketch"),
    (r"pop art|warhol|comic(?: book)?|halftone", "pop_art"),
    (r"cyberpunk|neon|synthwave|vaporwave|blade runner", "cyberpunk"),
    (r"vintage|retro|old photo|film photo|70s|nostalgic|faded film|polaroid|analog(?:ue)?",
     "vintage"),
    (r"cinematic|film look|movie|hollywood|blockbuster|film still", "cinematic"),
)  # fmt: skip
_STYLE_RES = [(re.compile(r"\b(?:" + p + r")\b"), s) for p, s in _STYLE_WORDS]
_MONO = re.compile(r"\b(?:monochrome|gr[ae]yscale|gr[ae]y ?scale|noir|bw|black white)\b")
_SEPIA = re.compile(r"\b(?:sepia|antique|old[- ]timey|daguerreotype)\b")

# Tonal adjustments: (kind, pattern, sign).
_ADJUST: tuple[tuple[StepKind, str, float], ...] = (
    ("warmth", r"warm(?:er|th)?|warm up|golden|sunnier|cozier|cosier", 1.0),
    ("warmth", r"cool(?:er)?|cold(?:er)?|cool down|icy|icier|bluish", -1.0),
    ("brightness", r"bright(?:er|en|ness)?|lighten|lighter|more light|illuminate|exposure",
     1.0),
    ("brightness", r"dark(?:er|en)?|dim(?:mer)?|moodier|underexposed?", -1.0),
    ("contrast", r"contrast(?:y)?|punch(?:y|ier)?|pop|dramatic", 1.0),
    ("contrast", r"flat(?:ter)?|matte|faded|softer contrast", -1.0),
    ("saturation", r"saturat(?:e|ed|ion)|vibran(?:t|ce)|vivid|colou?rful|boost(?:ed)? colou?rs?|"
     r"rich(?:er)? colou?rs?|more colou?r", 1.0),
    ("saturation", r"desaturat(?:e|ed|ion)|muted|washed out|dull(?:er)?|less colou?rful", -1.0),
    ("sharpen", r"sharpen(?:ed)?|sharper|sharp|crisp(?:er)?|more detail(?:ed)?|clarity|"
     r"unblur|deblur|in focus", 1.0),
    ("sharpen", r"soften|softer|smooth(?:er|en)?|blur(?:red|ry)?|dreamy", -1.0),
    ("vignette", r"vignett(?:e|ing)|darken the (?:edges|corners)", 1.0),
)  # fmt: skip
_ADJUST_RES = [(kind, re.compile(r"\b(?:" + p + r")\b"), sign) for kind, p, sign in _ADJUST]
_NEGATE = {"less", "reduce", "lower", "decrease", "decreased", "without", "not", "no", "lessen",
           "remove", "fewer", "tone down", "reduced", "lower the"}  # fmt: skip
_SOFTEN = {"slightly", "bit", "little", "subtly", "subtle", "somewhat", "touch", "tad", "mildly",
           "gently", "lightly"}  # fmt: skip
_BOOST = {"very", "much", "lot", "really", "super", "extremely", "strongly", "significantly",
          "way", "dramatically", "heavily", "lots"}  # fmt: skip
_SUBJECT_WORDS = re.compile(
    r"\b(?:subject|product|object|person|foreground|model|item|face|skin)\b"
)  # fmt: skip


def _intensity(clause: str, start: int) -> float:
    """Scale from intensity words among the few words before position ``start``."""
    before = clause[:start].split()[-3:]
    words = set(before)
    if words & _BOOST:
        return 1.5
    if words & _SOFTEN:
        return 0.5
    return 1.0


def _negated(clause: str, start: int) -> bool:
    before = clause[:start].split()[-3:]
    return bool(set(before) & _NEGATE)


def _normalise(prompt: str) -> str:
    text = prompt.lower().replace("colour", "color").replace("grey", "gray")
    text = re.sub(r"[\"'`’]", "", text)
    for pattern, token in _PROTECT:
        text = re.sub(pattern, token, text)
    return " ".join(text.split())


def _clean_target(what: str) -> str:
    what = re.sub(r"^(?:a|an|the|some|of|with|to|into)\s+", "", what.strip())
    what = re.sub(r"\s+" + _BG + r"$", "", what)
    return what.strip()


def _has_backdrop_terms(text: str) -> bool:
    return not parse_backdrop_prompt(text).fallback


def _background_step(clause: str) -> EditStep | None:
    """Removal, explicit replacement or blur of the background, if the clause asks for it."""
    if _REMOVE_BG.search(clause) and "blur" not in clause:
        return EditStep("remove_background")
    m = _REPLACE_EXPLICIT.search(clause) or _MAKE_BG.search(clause)
    if m:
        what = _clean_target(m.group("what"))
        if re.search(r"\b(?:" + _BLUR_WORDS + r")\b", what):
            return EditStep("blur_background", _intensity(clause, m.start("what")))
        if re.search(r"\btransparent\b|\bnothing\b|\bempty\b", what):
            return EditStep("remove_background")
        if _has_backdrop_terms(what):
            return EditStep("replace_background", value=what)
    if _BLUR_BG.search(clause):
        m2 = re.search(r"\b(?:" + _BLUR_WORDS + r")\b", clause)
        return EditStep("blur_background", _intensity(clause, m2.start() if m2 else 0))
    m = _PLACE_ON.search(clause)
    if m and _has_backdrop_terms(m.group("what")):
        return EditStep("replace_background", value=_clean_target(m.group("what")))
    m = _NOUN_BG.search(clause)
    if m:
        what = re.sub(
            r"^.*?\b(?:add|use|with|give it|want|on|in|against|new|different)\s+", "",
            m.group("what"),
        )  # fmt: skip
        what = _clean_target(what)
        if what and _has_backdrop_terms(what) and not _adjustments(clause, "background"):
            return EditStep("replace_background", value=what)
    return None


def _recolor_step(clause: str) -> EditStep | None:
    m = _RECOLOR_OF.search(clause) or _RECOLOR.search(clause)
    if not m:
        return None
    obj = m.group("obj").strip()
    if re.fullmatch(_BG, obj) or re.search(r"\b" + _BG + r"\b", obj):
        return None
    target: str | None = "image" if obj in _WHOLE else obj
    if obj in _MAIN:
        target = None
    return EditStep("recolor", 1.0, value=m.group("color"), target=target)


def _looks(clause: str) -> list[EditStep]:
    steps: list[EditStep] = []
    for pattern, style in _STYLE_RES:
        m = pattern.search(clause)
        if m:
            steps.append(EditStep("style", _intensity(clause, m.start()), value=style))
            break
    m = _MONO.search(clause)
    if m:
        steps.append(EditStep("monochrome", _intensity(clause, m.start())))
    m = _SEPIA.search(clause)
    if m:
        steps.append(EditStep("sepia", _intensity(clause, m.start())))
    return steps


def _adjustments(clause: str, region: Region) -> list[EditStep]:
    """Every tonal adjustment word in the clause, at most one step per kind (the first word of
    a kind decides its sign)."""
    found: dict[StepKind, tuple[int, EditStep]] = {}
    for kind, pattern, sign in _ADJUST_RES:
        if kind in found:
            continue
        m = pattern.search(clause)
        if not m:
            continue
        s = -sign if _negated(clause, m.start()) else sign
        step = EditStep(kind, s * _intensity(clause, m.start()), region=region)
        found[kind] = (m.start(), step)
    return [step for _, step in sorted(found.values(), key=lambda p: p[0])]


def _clause_steps(clause: str) -> list[EditStep]:
    bg = _background_step(clause)
    if bg is not None:
        return [bg]
    recolor = _recolor_step(clause)
    if recolor is not None:
        return [recolor]
    steps = _looks(clause)
    region: Region = "image"
    if re.search(r"\b" + _BG + r"\b", clause):
        region = "background"
    elif _SUBJECT_WORDS.search(clause):
        region = "subject"
    # Words already consumed by a look ("dark" in "dark and moody noir") still count as
    # adjustments only when no look matched, to avoid doubling one request.
    if not steps:
        steps = _adjustments(clause, region)
    return steps


def interpret(prompt: str) -> list[EditStep]:
    """The edit steps a prompt asks for, in the prompt's order. Raises
    :class:`PromptNotUnderstood` (a ``ValueError``) when nothing in it is recognised."""
    text = _normalise(prompt)
    steps: list[EditStep] = []
    for clause in (c for c in _SPLIT.split(text) if c):
        found = _clause_steps(clause)
        if found:
            steps.extend(found)
        elif steps and steps[-1].kind == "replace_background" and steps[-1].value:
            # "a beach with sand and palm trees": the "and" split the description.
            steps[-1] = replace(steps[-1], value=f"{steps[-1].value} and {clause}")
    if not steps:
        raise PromptNotUnderstood(
            "The edit prompt was not understood. Examples of what works: "
            + "; ".join(f'"{e}"' for e in EXAMPLES)
            + "."
        )
    return steps


# --- descriptions ----------------------------------------------------------------------------

_ADJECTIVES: dict[StepKind, tuple[str, str]] = {
    "warmth": ("warmer", "cooler"),
    "brightness": ("brighter", "darker"),
    "contrast": ("more contrast", "less contrast"),
    "saturation": ("more saturated", "less saturated"),
    "sharpen": ("sharpen", "soften"),
    "vignette": ("add a vignette", "lighten the corners"),
}


def _degree(amount: float) -> str:
    a = abs(amount)
    if a < 0.75:
        return " (slightly)"
    if a > 1.25:
        return " (strongly)"
    return ""


def _describe(step: EditStep) -> str:
    if step.kind == "replace_background":
        backdrop = parse_backdrop_prompt(step.value or "").description
        return f"replace the background with: {backdrop} (from '{step.value}')"
    if step.kind == "remove_background":
        return "remove the background (transparent PNG)"
    if step.kind == "blur_background":
        return "blur the background (portrait mode)" + _degree(step.amount)
    if step.kind == "recolor":
        if step.target == "image":
            return f"tint the whole image {step.value}"
        what = step.target or "main object"
        return f"recolour the {what} {step.value} (the main object's dominant colour)"
    if step.kind == "monochrome":
        return "black and white"
    if step.kind == "sepia":
        return "sepia tone"
    if step.kind == "style":
        return f"{(step.value or '').replace('_', ' ')} style" + _degree(step.amount)
    up, down = _ADJECTIVES[step.kind]
    text = up if step.amount >= 0 else down
    noun = {"image": "it", "background": "the background", "subject": "the subject"}[step.region]
    if step.kind in ("warmth", "brightness"):
        text = f"make {noun} {text}"
    elif step.region != "image":
        text = f"{text} ({noun} only)"
    return text + _degree(step.amount)
