"""Image analysis on real photos and on images with known text and a known QR code."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from skimage import data

from pixelmill.engines.analyze import (
    AnalyzeEngine,
    AnalyzeParams,
    analyze_image,
    guess_product_category,
)
from pixelmill.engines.analyze.analysis import assess_quality, is_real_text, lighting_of
from pixelmill.engines.analyze.colors import colour_name, dominant_colours
from pixelmill.engines.base import EngineInputs, ImageArray
from pixelmill.engines.runtime.measures import luminance
from pixelmill.engines.runtime.ocr import TextLine

QR_DATA = "https://pixelmill.example/p/42"


def photo(name: str) -> ImageArray:
    """A scikit-image sample photo (bundled with the package, no network) as RGB uint8."""
    img = np.asarray(getattr(data, name)(), dtype=np.uint8)
    return np.ascontiguousarray(np.dstack([img] * 3)) if img.ndim == 2 else img


def label_with_text_and_qr() -> ImageArray:
    """A 640×360 'product label': two lines of dark text and a QR code on a light card."""
    img = np.full((360, 640, 3), 242, np.uint8)
    for text, y in (("ORGANIC DARK", 90), ("CHOCOLATE", 160)):
        cv2.putText(img, text, (30, y), cv2.FONT_HERSHEY_DUPLEX, 1.6, (35, 30, 30), 3, cv2.LINE_AA)
    qr = cv2.QRCodeEncoder.create().encode(QR_DATA)
    qr = cv2.resize(qr, None, fx=5, fy=5, interpolation=cv2.INTER_NEAREST)
    qr = cv2.copyMakeBorder(qr, 20, 20, 20, 20, cv2.BORDER_CONSTANT, value=255)
    y0, x0 = 360 - qr.shape[0] - 10, 640 - qr.shape[1] - 10
    img[y0 : y0 + qr.shape[0], x0 : x0 + qr.shape[1]] = qr[..., None]
    return img


@pytest.fixture(scope="module")
def astronaut() -> dict[str, object]:
    return analyze_image(photo("astronaut"))


@pytest.fixture(scope="module")
def label() -> dict[str, object]:
    return analyze_image(label_with_text_and_qr())


def test_astronaut_has_a_face_and_a_person(astronaut: dict[str, object]) -> None:
    detections = astronaut["detections"]
    assert isinstance(detections, list)
    labels = [d["label"] for d in detections]
    assert labels.count("face") == 1
    assert labels.count("person") >= 1
    face = next(d for d in detections if d["label"] == "face")
    x, y, w, h = face["box"]
    assert 150 < x + w / 2 < 260 and 90 < y + h / 2 < 170  # the astronaut's face
    assert astronaut["objects"][:2] == ["person", "face"]  # type: ignore[index]
    assert "portrait" in astronaut["categories"]  # type: ignore[operator]


def test_colours_are_named_and_sum_to_100(astronaut: dict[str, object]) -> None:
    colours = astronaut["colors"]
    assert isinstance(colours, list) and len(colours) == 5
    assert sum(c["percentage"] for c in colours) == pytest.approx(100.0, abs=0.05)
    for c in colours:
        assert isinstance(c["name"], str) and c["name"]
        assert len(c["hex"]) == 7 and c["hex"].startswith("#")
    shares = [c["percentage"] for c in colours]
    assert shares == sorted(shares, reverse=True)


def test_client_read_fields_have_the_right_types(astronaut: dict[str, object]) -> None:
    # The MCP client joins these lists with ", " and formats the others into text.
    for key in ("objects", "text_detected", "categories", "suggested_uses"):
        value = astronaut[key]
        assert isinstance(value, list) and all(isinstance(v, str) for v in value), key
    for key in ("description", "mood", "accessibility_alt_text"):
        assert isinstance(astronaut[key], str) and astronaut[key], key
    comp = astronaut["composition"]
    assert isinstance(comp, dict)
    assert isinstance(comp["type"], str) and isinstance(comp["lighting"], str)
    quality = astronaut["quality_assessment"]
    assert isinstance(quality, dict)
    assert 0.0 <= quality["overall"] <= 10.0
    assert quality["sharpness"] == "sharp" and isinstance(quality["exposure"], str)


def test_rendered_text_is_read(label: dict[str, object]) -> None:
    text = " ".join(label["text_detected"]).upper()  # type: ignore[arg-type]
    assert "ORGANIC" in text and "CHOCOLATE" in text
    assert "text" in label["objects"]  # type: ignore[operator]
    assert "CHOCOLATE" in str(label["description"]).upper()


def test_generated_qr_code_is_decoded(label: dict[str, object]) -> None:
    detections = label["detections"]
    assert isinstance(detections, list)
    qr = [d for d in detections if d["label"] == "qr_code"]
    assert len(qr) == 1 and qr[0]["data"] == QR_DATA
    x, y, w, _ = qr[0]["box"]
    assert x > 400 and y > 100 and 100 < w < 220  # bottom-right, 165 px code + quiet zone
    assert "qr code" in label["categories"]  # type: ignore[operator]


def test_product_category_from_label_words(label: dict[str, object]) -> None:
    assert guess_product_category(label) == "food"
    assert guess_product_category({"text_detected": ["Hydrating serum 30 ml"]}) == "beauty"
    assert (
        guess_product_category({"text_detected": [], "objects": ["person", "face"]}) == "clothing"
    )
    assert guess_product_category({"text_detected": [], "objects": ["main object"]}) == "other"


def test_cat_photo_has_no_people_and_no_invented_object_name() -> None:
    result = analyze_image(photo("chelsea"))
    assert result["objects"] == ["main object"]
    assert "cat" not in str(result["description"]).lower()  # no classifier: no class names
    assert result["text_detected"] == []


def test_blurred_and_dark_copies_score_lower() -> None:
    img = photo("coffee")
    good = assess_quality(img, luminance(img))
    blurred_img = np.asarray(cv2.GaussianBlur(img, (0, 0), 3.0), np.uint8)
    blurred = assess_quality(blurred_img, luminance(blurred_img))
    dark_img = np.asarray(img // 4, np.uint8)
    dark = assess_quality(dark_img, luminance(dark_img))
    assert good["sharpness"] == "sharp" and good["exposure"] == "well exposed"
    assert blurred["sharpness"] in ("soft", "blurry")
    assert blurred["overall"] < good["overall"] - 2.0
    assert dark["exposure"] == "underexposed"
    no_subject = np.zeros(img.shape[:2], np.float32)
    assert lighting_of(luminance(dark_img), no_subject) == "low-key"


def test_colour_names_and_transparent_pixels() -> None:
    assert colour_name((250, 250, 250)) == "white"
    assert colour_name((20, 30, 200)) in ("blue", "navy")
    rgba = np.zeros((64, 64, 4), np.uint8)
    rgba[..., 0] = 220  # red everywhere...
    rgba[:, :32, 2] = 220  # ...magenta on the left half, which is transparent
    rgba[:, 32:, 3] = 255
    colours = dominant_colours(rgba[..., :3], 5, rgba[..., 3])
    assert len(colours) == 1 and colours[0].name in ("red", "crimson")


def test_engine_returns_no_image_and_reports_its_method() -> None:
    result = AnalyzeEngine().run(EngineInputs(photo("camera")[::2, ::2].copy()), AnalyzeParams())
    assert result.images == []
    assert "no named-object classifier" in result.details["method"]


def test_single_character_or_unsure_ocr_is_not_text() -> None:
    assert is_real_text(TextLine("AQUA", 0.97, []))
    assert not is_real_text(TextLine("O", 0.95, []))  # texture read as a letter
    assert not is_real_text(TextLine("AQUA", 0.55, []))


def test_a_dark_product_on_white_is_high_key_not_backlit() -> None:
    """A studio packshot: a dark product on an even white backdrop. A dark subject against an
    uneven bright surround (a window) stays backlit."""
    luma = np.full((200, 200), 0.97, np.float32)
    luma[50:170, 70:130] = 0.1
    mask = np.zeros_like(luma)
    mask[50:170, 70:130] = 1.0
    assert lighting_of(luma, mask) == "high-key"
    window = luma.copy()
    window[~(mask > 0.5)] = np.tile(np.linspace(0.6, 1.0, 200, dtype=np.float32), (200, 1))[
        ~(mask > 0.5)
    ]
    assert lighting_of(window, mask) == "backlit"
