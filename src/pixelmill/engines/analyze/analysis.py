"""Image analysis from classical measurements and the detectors we have offline.

What can be found: people (mediapipe pose + OpenCV HOG), faces and hands (mediapipe), text
(RapidOCR), the main salient object's box (U²-Net-p), QR codes (OpenCV, decoded). There is
**no named-object classifier** (no YOLO/CLIP/MobileNet with bundled weights exists offline), so
nothing here will say "cat" or "bottle": a cat is a "main object". Everything else (palette,
quality, composition, lighting, mood, categories, sentences) is derived from those facts and
from pixel statistics by the documented rules below, so every word in the output can be traced
to a measurement.

:func:`analyze_image` returns a JSON-ready ``dict`` that the ``analyze`` engine, the
image-to-prompt engine and the product library reuse.
"""

from __future__ import annotations

import math
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.categories import from_spec
from pixelmill.engines.analyze.category import by_keywords, classify
from pixelmill.engines.analyze.colors import PaletteColour, dominant_colours
from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime import faces as people_detection
from pixelmill.engines.runtime import ocr
from pixelmill.engines.runtime.blur import estimate_blur_sigma
from pixelmill.engines.runtime.colour import to_lab
from pixelmill.engines.runtime.measures import (
    colourfulness,
    exposure_stats,
    luminance,
    noise_sigma,
    resize_longest,
)
from pixelmill.engines.runtime.segmentation import U2NETP, main_object_box, salient_mask

METHOD = (
    "classical analysis: u2netp saliency (main-object box), mediapipe faces/hands/pose + "
    "OpenCV HOG people, RapidOCR text, OpenCV QR decoding, k-means palette, blur/noise/"
    "exposure statistics; no named-object classifier, so objects are limited to person, face, "
    "hand, text, QR code and the main salient object"
)

Box = tuple[int, int, int, int]

TEXT_MIN_CONFIDENCE = 0.6
"""OCR lines below this are ignored (RapidOCR itself keeps ≥ 0.5)."""


def is_real_text(line: ocr.TextLine) -> bool:
    """Whether an OCR line counts as text: confidence ≥ :data:`TEXT_MIN_CONFIDENCE` and at least
    two letters or digits. Texture (fur, foliage) sometimes reads as a lone "O" or "l"."""
    return line.confidence >= TEXT_MIN_CONFIDENCE and sum(c.isalnum() for c in line.text) >= 2


def load_models() -> None:
    """Load every model the analysis uses (idempotent, thread-safe)."""
    people_detection.load()
    ocr.load_ocr()
    U2NETP.load()


@dataclass(frozen=True)
class _Found:
    faces: list[people_detection.FaceBox]
    hands: list[people_detection.HandBox]
    people: list[people_detection.PersonBox]
    text: list[ocr.TextLine]
    mask: npt.NDArray[np.float32]
    qr: list[tuple[str, Box]]


def _quad_box(quad: ocr.Quad, w: int, h: int) -> Box:
    xs = [p[0] for p in quad]
    ys = [p[1] for p in quad]
    x0, y0 = max(0, math.floor(min(xs))), max(0, math.floor(min(ys)))
    x1, y1 = min(w, math.ceil(max(xs))), min(h, math.ceil(max(ys)))
    return (x0, y0, max(0, x1 - x0), max(0, y1 - y0))


def decode_qr_codes(rgb: ImageArray) -> list[tuple[str, Box]]:
    """Every QR code OpenCV can find, with its decoded text ("" when found but unreadable) and
    bounding box."""
    detector = cv2.QRCodeDetector()
    ok, texts, points, _ = detector.detectAndDecodeMulti(rgb)
    if not ok or points is None:
        return []
    h, w = rgb.shape[:2]
    found: list[tuple[str, Box]] = []
    for text, quad in zip(texts, points, strict=False):
        box = _quad_box([(float(p[0]), float(p[1])) for p in quad], w, h)
        found.append((str(text), box))
    return found


def _detect(rgb: ImageArray) -> _Found:
    """Run the detectors concurrently: the ONNX sessions, mediapipe and OpenCV release the GIL,
    so OCR (~350 ms/MP) and saliency (~290 ms) overlap instead of adding up."""
    with ThreadPoolExecutor(max_workers=3) as pool:
        text_f = pool.submit(ocr.read_text, rgb)
        mask_f = pool.submit(salient_mask, rgb)
        qr_f = pool.submit(decode_qr_codes, rgb)
        faces = people_detection.detect_faces(rgb)
        hands = people_detection.detect_hands(rgb)
        people = people_detection.detect_people(rgb)
        text = [line for line in text_f.result() if is_real_text(line)]
        return _Found(faces, hands, people, text, mask_f.result(), qr_f.result())


# --- quality -------------------------------------------------------------------------------


def _word(value: float, ladder: tuple[tuple[float, str], ...], above: str) -> str:
    """The word of the first ``(bound, word)`` step whose bound ``value`` is under, else
    ``above``."""
    return next((word for bound, word in ladder if value < bound), above)


def _linear_score(value: float, best: float, worst: float) -> float:
    """10 at ``best`` or better, 0 at ``worst`` or worse, linear between."""
    t = (value - best) / (worst - best)
    return round(10.0 * float(np.clip(1.0 - t, 0.0, 1.0)), 1)


def assess_quality(rgb: ImageArray, luma: npt.NDArray[np.float32]) -> dict[str, Any]:
    """Sharpness, exposure and noise, each as a 0–10 score and a word, and ``overall``
    (0–10, one decimal) = 0.4 sharpness + 0.35 exposure + 0.25 noise, minus 1 below 0.25 MP.

    - sharpness from the estimated Gaussian blur σ: 10 at ≤ 0.6 px, 0 at ≥ 3.5 px;
    - exposure: 10 minus 25 per unit the mean luminance strays outside 0.35–0.65, minus 50 per
      unit of pixels clipped beyond 2 % (shadows and highlights counted separately);
    - noise from the luminance noise σ: 10 at ≤ 1.5 grey levels, 0 at ≥ 10.
    """
    noise = noise_sigma(rgb)
    blur = estimate_blur_sigma(luma * 255.0, noise)
    ex = exposure_stats(np.asarray(resize_longest(luma, 768), dtype=np.float32))
    sharp_score = _linear_score(blur, 0.6, 3.5)
    sharp_word = _word(blur, ((0.9, "sharp"), (1.6, "slightly soft"), (2.5, "soft")), "blurry")
    stray = max(0.0, 0.35 - ex.mean, ex.mean - 0.65)
    clip_pen = 50.0 * (max(0.0, ex.shadows_clipped - 0.02) + max(0.0, ex.highlights_clipped - 0.02))
    exposure_score = round(float(np.clip(10.0 - 25.0 * stray - clip_pen, 0.0, 10.0)), 1)
    if ex.mean < 0.3:
        exposure_word = "underexposed"
    elif ex.mean > 0.72:
        exposure_word = "overexposed"
    elif ex.highlights_clipped > 0.05:
        exposure_word = "clipped highlights"
    elif ex.shadows_clipped > 0.15:
        exposure_word = "deep shadows"
    else:
        exposure_word = "well exposed"
    noise_score = _linear_score(noise, 1.5, 10.0)
    noise_word = _word(noise, ((2.0, "clean"), (4.0, "slight grain"), (8, "noisy")), "very noisy")
    megapixels = rgb.shape[0] * rgb.shape[1] / 1e6
    overall = 0.4 * sharp_score + 0.35 * exposure_score + 0.25 * noise_score
    if megapixels < 0.25:
        overall -= 1.0
    return {
        "overall": round(float(np.clip(overall, 0.0, 10.0)), 1),
        "sharpness": sharp_word,
        "sharpness_score": sharp_score,
        "blur_sigma_px": round(blur, 2),
        "exposure": exposure_word,
        "exposure_score": exposure_score,
        "mean_brightness": round(ex.mean, 3),
        "noise": noise_word,
        "noise_score": noise_score,
        "noise_sigma": round(noise, 2),
        "megapixels": round(megapixels, 2),
        "scale": "overall, *_score: 0 (worst) to 10 (best)",
    }


# --- composition, lighting, mood -----------------------------------------------------------


def _subject_box(found: _Found, w: int, h: int) -> tuple[Box | None, str]:
    """The box composition is judged on: the largest person, else the largest face, else the
    salient object."""
    if found.people:
        return max(found.people, key=lambda p: p.area).box, "person"
    if found.faces:
        return max(found.faces, key=lambda f: f.area).box, "face"
    box = main_object_box(found.mask)
    return box, "main object" if box is not None else "none"


def composition_of(subject: Box | None, luma: npt.NDArray[np.float32]) -> dict[str, Any]:
    """Composition ``type`` from where the subject sits:

    - ``close-up``: the subject box covers over 60 % of the frame;
    - ``centered``: its centre is within 10 % (x) / 12 % (y) of the frame centre;
    - ``rule_of_thirds``: its centre is within 8 % of a third line (and not centred);
    - ``left-weighted`` / ``right-weighted``: otherwise, by side;
    - without a subject: ``symmetrical`` when the left half mirrors the right (correlation
      > 0.8 at 64 px), else ``open`` (no dominant subject: scenery, patterns).
    """
    h, w = luma.shape
    result: dict[str, Any] = {
        "aspect_ratio": round(w / h, 3),
        "orientation": "landscape" if w > h * 1.05 else "portrait" if h > w * 1.05 else "square",
    }
    if subject is not None:
        x, y, bw, bh = subject
        cx, cy = (x + bw / 2) / w, (y + bh / 2) / h
        fill = bw * bh / (w * h)
        thirds = (1 / 3, 2 / 3)
        if fill > 0.6:
            kind = "close-up"
        elif abs(cx - 0.5) < 0.1 and abs(cy - 0.5) < 0.12:
            kind = "centered"
        elif any(abs(cx - t) < 0.08 for t in thirds) or any(abs(cy - t) < 0.08 for t in thirds):
            kind = "rule_of_thirds"
        else:
            kind = "left-weighted" if cx < 0.5 else "right-weighted"
        result.update(
            type=kind,
            subject_center=[round(cx, 3), round(cy, 3)],
            subject_fill=round(fill, 3),
        )
        return result
    small = np.asarray(cv2.resize(luma, (64, 64), interpolation=cv2.INTER_AREA), np.float64)
    left, right = small[:, :32], small[:, 32:][:, ::-1]
    corr = float(np.corrcoef(left.ravel(), right.ravel())[0, 1]) if small.std() > 1e-3 else 1.0
    result["type"] = "symmetrical" if corr > 0.8 else "open"
    return result


def lighting_of(luma: npt.NDArray[np.float32], mask: npt.NDArray[np.float32]) -> str:
    """One lighting word, first rule that applies:

    ``high-key`` (a studio shot: a salient subject covering 5–80 % on an even, near-white
    backdrop, outside mean > 0.8 and std < 0.06, however dark the product itself), ``backlit``
    (such a subject at least 0.2 darker than an uneven bright surround: a window, a sky),
    ``low-key`` (mean < 0.3), ``high-key`` (mean > 0.68 with few deep shadows),
    ``high-contrast`` (luminance std > 0.28), ``even`` (std < 0.12), ``bright`` (mean > 0.55),
    else ``natural``."""
    ex = exposure_stats(luma)
    subject = mask > 0.5
    share = float(subject.mean())
    if 0.05 < share < 0.8:
        inside = float(luma[subject].mean())
        around = luma[mask < 0.2]
        outside = float(around.mean()) if around.size else float(luma[~subject].mean())
        if outside > 0.8 and around.size and float(around.std()) < 0.06:
            return "high-key"
        if outside - inside > 0.2:
            return "backlit"
    if ex.mean < 0.3:
        return "low-key"
    if ex.mean > 0.68 and ex.p01 > 0.15:
        return "high-key"
    if ex.std > 0.28:
        return "high-contrast"
    if ex.std < 0.12:
        return "even"
    if ex.mean > 0.55:
        return "bright"
    return "natural"


def warm_fraction(rgb: ImageArray) -> float:
    """Share of the clearly coloured pixels (chroma > 10) whose hue is warm (reds, oranges,
    yellows: CIELAB hue angle −30°..100°). 0.5 when nothing is coloured."""
    lab = to_lab(np.asarray(resize_longest(rgb, 256), dtype=np.uint8))
    a, b = lab[..., 1], lab[..., 2]
    chroma = np.hypot(a, b)
    coloured = chroma > 10.0
    if int(coloured.sum()) < 50:
        return 0.5
    hue = np.degrees(np.arctan2(b[coloured], a[coloured]))
    return float(np.mean((hue > -30.0) & (hue < 100.0)))


def mood_of(brightness: float, contrast: float, colourful: float, warm: float) -> str:
    """A mood phrase from brightness (mean luminance), contrast (luminance std),
    colourfulness (Hasler–Süsstrunk) and the warm share, first matching rule:

    monochrome (colourfulness < 6) → "timeless and classic" (or "stark and dramatic" when
    contrast > 0.28); dark (< 0.3) → "moody and mysterious"; very colourful (> 60) →
    "vibrant and energetic"; bright (> 0.55) and warm (> 0.6) → "cheerful and warm"; bright and
    cool (< 0.4) → "fresh and airy"; warm → "warm and inviting"; cool → "calm and serene";
    dull colour (< 20) → "muted and understated"; else "balanced and natural"."""
    if colourful < 6.0:
        return "stark and dramatic" if contrast > 0.28 else "timeless and classic"
    if brightness < 0.3:
        return "moody and mysterious"
    if colourful > 60.0:
        return "vibrant and energetic"
    if brightness > 0.55 and warm > 0.6:
        return "cheerful and warm"
    if brightness > 0.55 and warm < 0.4:
        return "fresh and airy"
    if warm > 0.6:
        return "warm and inviting"
    if warm < 0.4:
        return "calm and serene"
    if colourful < 20.0:
        return "muted and understated"
    return "balanced and natural"


# --- categories, sentences -----------------------------------------------------------------


def is_graphic(rgb: ImageArray) -> bool:
    """Flat-colour artwork (logos, illustrations, screenshots, charts) rather than a photo:
    over 55 % of pixels sit in perfectly flat 3×3 neighbourhoods, which camera noise and
    texture never produce."""
    small = np.asarray(resize_longest(rgb, 384), dtype=np.uint8).astype(np.int16)
    if min(small.shape[:2]) < 3:
        return False
    flat = np.ones(small.shape[:2], dtype=bool)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            shifted = np.roll(np.roll(small, dy, axis=0), dx, axis=1)
            flat &= np.all(shifted == small, axis=2)
    return float(flat[1:-1, 1:-1].mean()) > 0.55


def categories_of(
    found: _Found,
    text_lines: list[str],
    text_area: float,
    colourful: float,
    graphic: bool,
    luma: npt.NDArray[np.float32],
    subject: Box | None,
    subject_kind: str,
) -> list[str]:
    """Categories by rule (several may apply; ``photo`` when none does):

    - ``portrait``: a face covering ≥ 1.5 % of the frame; ``people``/``group`` for 2+ people or
      faces;
    - ``document``: text boxes cover ≥ 10 % of the frame, or ≥ 6 text lines with a bright,
      low-colour page;
    - ``graphic``: flat-colour artwork (:func:`is_graphic`);
    - ``product``: no people, a salient object covering 5–75 % of the frame on a plain
      background (luminance std outside the object < 0.08);
    - ``landscape``: no people and no compact subject, wider than tall, not flat (luminance
      std > 0.05), and a top band at least as bright as the bottom band (sky above ground);
    - ``qr code`` when one was decoded.
    """
    h, w = luma.shape
    cats: list[str] = []
    faces, people = found.faces, found.people
    if faces and max(f.area for f in faces) >= 0.015 * h * w:
        cats.append("portrait")
    if max(len(faces), len(people)) >= 3:
        cats.append("group")
    elif max(len(faces), len(people)) >= 2:
        cats.append("people")
    bright_page = float(luma.mean()) > 0.6 and colourful < 25.0
    if text_area >= 0.10 or (len(text_lines) >= 6 and bright_page):
        cats.append("document")
    if graphic:
        cats.append("graphic")
    if not faces and not people and subject is not None and subject_kind == "main object":
        fill = subject[2] * subject[3] / (w * h)
        background = found.mask < 0.2
        plain = background.mean() > 0.2 and float(luma[background].std()) < 0.08
        if 0.05 <= fill <= 0.75 and plain:
            cats.append("product")
    scenery = float(luma.std()) > 0.05  # a blank or flat frame is not a landscape
    if not faces and not people and w > h and scenery and "product" not in cats:
        band = max(1, h // 5)
        if float(luma[:band].mean()) >= float(luma[-band:].mean()):
            salient_share = float((found.mask > 0.5).mean())
            if salient_share < 0.15 or salient_share > 0.85:
                cats.append("landscape")
    if found.qr:
        cats.append("qr code")
    return cats or ["photo"]


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def _object_labels(found: _Found, main_box: Box | None) -> list[str]:
    labels: list[str] = []
    if found.people:
        labels.append(
            "person" if len(found.people) == 1 else _plural(len(found.people), "person", "people")
        )
    if found.faces:
        labels.append("face" if len(found.faces) == 1 else _plural(len(found.faces), "face"))
    if found.hands:
        labels.append("hand" if len(found.hands) == 1 else _plural(len(found.hands), "hand"))
    if found.text:
        labels.append("text")
    if found.qr:
        labels.append("QR code" if len(found.qr) == 1 else _plural(len(found.qr), "QR code"))
    if main_box is not None:
        labels.append("main object")
    return labels


def _colour_phrase(colours: list[PaletteColour], n: int = 3) -> str:
    names: list[str] = []
    for c in colours:
        if c.name not in names:
            names.append(c.name)
        if len(names) == n:
            break
    if len(names) <= 1:
        return names[0] if names else "neutral"
    return ", ".join(names[:-1]) + " and " + names[-1]


def _subject_phrase(found: _Found, categories: list[str], main_box: Box | None) -> str:
    n_people = max(len(found.people), len(found.faces))
    if n_people:
        who = "a person" if n_people == 1 else f"{n_people} people"
        if (
            "portrait" in categories
            and n_people == 1
            and found.faces[0].area > 0.08 * found.mask.size
        ):
            who = "a person in close view"
        return who
    if "document" in categories:
        return "a page of text"
    if found.qr:
        return "a QR code"
    if "product" in categories:
        return "a single object on a plain background"
    if main_box is not None:
        return "a main subject"
    return "a scene with no single subject"


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


def guess_product_category(analysis: dict[str, Any]) -> str:
    """A product category, as the library stores it, from an :func:`analyze_image` result:
    its ``product_category`` (:func:`.category.classify`); for an analysis from elsewhere (a
    hosted model), keywords read on the product, else ``clothing`` when a person is in it."""
    guessed = analysis.get("product_category")
    if isinstance(guessed, dict) and isinstance(guessed.get("category"), str):
        return str(from_spec(guessed["category"]))
    read = by_keywords(
        set(re.findall(r"[a-z0-9]+", " ".join(analysis.get("text_detected", [])).lower()))
    )
    if read is not None:
        return str(from_spec(read))
    labels = " ".join(analysis.get("objects", []))
    return "clothing" if "person" in labels or "people" in labels else "other"


def analyze_image(image: ImageArray) -> dict[str, Any]:
    """Analyse an RGB(A) image and return a JSON-ready dict (see ``docs``/module docstring).

    Keys: ``width``, ``height``, ``objects`` (short labels such as ``"person"``,
    ``"2 faces"``, ``"main object"``), ``detections`` (``{label, confidence, box: [x, y, w,
    h]}`` plus ``text``/``data`` for text lines and QR codes), ``colors``, ``mood``,
    ``quality_assessment``, ``composition``, ``text_detected``, ``categories``, ``style``
    (``photo``/``graphic``/``monochrome photo``), ``description``, ``suggested_uses``,
    ``accessibility_alt_text``, ``method``."""
    if image.ndim != 3 or image.shape[2] not in (3, 4) or image.dtype != np.uint8:
        raise ValueError(f"expected a uint8 RGB or RGBA image, got {image.dtype} {image.shape}")
    rgb = np.ascontiguousarray(image[..., :3])
    alpha = np.ascontiguousarray(image[..., 3]) if image.shape[2] == 4 else None
    h, w = rgb.shape[:2]
    luma = luminance(rgb)
    found = _detect(rgb)

    detections: list[dict[str, Any]] = []
    for p in found.people:
        detections.append(
            {
                "label": "person",
                "confidence": round(p.score, 3),
                "box": list(p.box),
                "source": p.source,
            }
        )
    for f in found.faces:
        detections.append({"label": "face", "confidence": round(f.score, 3), "box": list(f.box)})
    for hd in found.hands:
        detections.append(
            {
                "label": "hand",
                "confidence": round(hd.score, 3),
                "box": list(hd.box),
                "handedness": hd.handedness,
            }
        )
    text_lines: list[str] = []
    text_area = 0.0
    for line in found.text:
        box = _quad_box(line.box, w, h)
        text_area += box[2] * box[3]
        detections.append(
            {
                "label": "text",
                "confidence": round(line.confidence, 3),
                "box": list(box),
                "text": line.text,
            }
        )
        text_lines.append(line.text.strip())
    text_area = min(1.0, text_area / (w * h))
    for data, box in found.qr:
        detections.append(
            {"label": "qr_code", "confidence": 1.0 if data else 0.5, "box": list(box), "data": data}
        )
    main_box = main_object_box(found.mask)
    if main_box is not None:
        x, y, bw, bh = main_box
        inside = found.mask[y : y + bh, x : x + bw]
        detections.append(
            {
                "label": "main_object",
                "confidence": round(float(inside.mean()), 3),
                "box": list(main_box),
            }
        )

    colours = dominant_colours(rgb, 5, alpha)
    colourful = colourfulness(np.asarray(resize_longest(rgb, 512), dtype=np.uint8))
    ex = exposure_stats(np.asarray(resize_longest(luma, 768), dtype=np.float32))
    warm = warm_fraction(rgb)
    graphic = is_graphic(rgb)
    subject, subject_kind = _subject_box(found, w, h)
    composition = composition_of(subject, luma)
    composition["lighting"] = lighting_of(
        np.asarray(resize_longest(luma, 768), np.float32),
        np.asarray(resize_longest(found.mask, 768), np.float32),
    )
    composition["subject"] = subject_kind
    quality = assess_quality(rgb, luma)
    categories = categories_of(
        found, text_lines, text_area, colourful, graphic, luma, subject, subject_kind
    )
    style = "graphic" if graphic else "monochrome photo" if colourful < 6.0 else "photo"
    mood = mood_of(ex.mean, ex.std, colourful, warm)

    subject_phrase = _subject_phrase(found, categories, main_box)
    colour_phrase = _colour_phrase(colours)
    layout = str(composition["type"]).replace("_", " ")
    kind = next(
        (c for c in categories if c in ("portrait", "product", "document", "landscape")), None
    )
    noun = f"{kind} {style}" if kind and style != "graphic" else style
    article = "an" if noun[0] in "aeiou" else "a"
    description = (
        f"{_sentence_case(article)} {noun} of {subject_phrase}"
        f" ({layout} composition) in {colour_phrase} tones with {composition['lighting']} "
        f"lighting and a {mood} mood"
    )
    if text_lines:
        shown = "; ".join(text_lines[:3])
        description += f', with visible text: "{shown}"'
    description += "."
    alt = f"{_sentence_case(noun)} of {subject_phrase} in {colour_phrase} tones"
    if text_lines:
        alt += f', with the text "{"; ".join(text_lines[:2])}"'
    if found.qr and found.qr[0][0]:
        alt += ", and a QR code"
    alt += "."

    face_share = max((f.area for f in found.faces), default=0.0) / (w * h)
    guess = classify(
        rgb,
        found.mask,
        text=text_lines,
        face_share=face_share,
        person=bool(found.people and found.faces),
    )
    return {
        "width": w,
        "height": h,
        "objects": _object_labels(found, main_box),
        "detections": detections,
        "colors": [c.as_dict() for c in colours],
        "mood": mood,
        "quality_assessment": quality,
        "composition": composition,
        "text_detected": text_lines,
        "categories": categories,
        "style": style,
        "colorfulness": round(colourful, 1),
        "warm_fraction": round(warm, 3),
        "description": description,
        "suggested_uses": suggested_uses(categories, quality, w, h),
        "accessibility_alt_text": alt,
        "product_category": guess.as_dict(),
        "method": METHOD,
    }


USES: dict[str, list[str]] = {
    "portrait": ["profile picture", "team or about page", "social media post"],
    "people": ["social media post", "event recap", "community page"],
    "group": ["team page", "event recap", "social media post"],
    "product": ["e-commerce listing", "product catalogue", "social media ad"],
    "document": ["archiving", "text extraction", "reference copy"],
    "graphic": ["presentation slide", "web graphic", "social media post"],
    "landscape": ["website hero banner", "desktop wallpaper", "travel blog"],
    "qr code": ["print flyer", "packaging", "signage"],
    "photo": ["blog illustration", "social media post", "website content"],
}


def suggested_uses(categories: list[str], quality: dict[str, Any], w: int, h: int) -> list[str]:
    """Uses that fit the categories, plus print when the image is large and good enough, or an
    enhancement hint when its quality is low."""
    uses: list[str] = []
    for cat in categories:
        for use in USES.get(cat, []):
            if use not in uses:
                uses.append(use)
    if w * h >= 2_000_000 and float(quality["overall"]) >= 7.0:
        uses.append("print")
    if float(quality["overall"]) < 5.0:
        uses.append("enhance or unblur before publishing")
    return uses[:6]
