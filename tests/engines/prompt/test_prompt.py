"""Image-to-prompt: four prompt variants in the shapes clients read, built from real facts."""

from __future__ import annotations

import numpy as np
import pytest
from skimage import data

from pixelmill.engines.base import EngineInputs, ImageArray
from pixelmill.engines.prompt import (
    ImageToPromptEngine,
    ImageToPromptParams,
    aspect_ratio,
    build_prompts,
)

ENGINE = ImageToPromptEngine()


def photo(name: str) -> ImageArray:
    """A scikit-image sample photo (bundled with the package, no network) as RGB uint8."""
    img = np.asarray(getattr(data, name)(), dtype=np.uint8)
    return np.ascontiguousarray(np.dstack([img] * 3)) if img.ndim == 2 else img


@pytest.fixture(scope="module")
def astronaut_details() -> dict[str, object]:
    return ENGINE.run(EngineInputs(photo("astronaut")), ImageToPromptParams()).details


def test_all_prompts_are_non_empty_strings(astronaut_details: dict[str, object]) -> None:
    prompts = astronaut_details["prompts"]
    assert isinstance(prompts, dict)
    assert set(prompts) == {"general", "flux", "midjourney", "stable_diffusion"}
    for key in ("general", "flux", "midjourney"):
        assert isinstance(prompts[key], str) and len(prompts[key]) > 20, key
    sd = prompts["stable_diffusion"]
    assert set(sd) == {"positive", "negative"}
    assert all(isinstance(v, str) and v for v in sd.values())


def test_prompts_carry_the_analysis_facts(astronaut_details: dict[str, object]) -> None:
    prompts = astronaut_details["prompts"]
    analysis = astronaut_details["analysis"]
    assert isinstance(prompts, dict) and isinstance(analysis, dict)
    assert "--ar 1:1" in prompts["midjourney"] and "--style raw" in prompts["midjourney"]
    assert "portrait photograph of a person" in prompts["general"]
    top_colour = analysis["colors"][0]["name"]
    assert top_colour in prompts["flux"]
    assert "bad anatomy" in prompts["stable_diffusion"]["negative"]  # a person is present
    assert "no captioning" in str(astronaut_details["method"])


def test_midjourney_aspect_ratio_follows_the_image() -> None:
    details = ENGINE.run(EngineInputs(photo("coffee")), ImageToPromptParams()).details
    assert "--ar 3:2" in details["prompts"]["midjourney"]  # 600 x 400
    assert aspect_ratio(1920, 1080) == "16:9"
    assert aspect_ratio(1080, 1350) == "4:5"
    assert aspect_ratio(1000, 370) == "19:7"  # no common ratio within 3 %


def test_graphic_and_text_change_the_prompt_style() -> None:
    facts = {
        "width": 800,
        "height": 800,
        "style": "graphic",
        "categories": ["graphic"],
        "detections": [{"label": "text", "confidence": 0.9, "box": [0, 0, 10, 10]}],
        "text_detected": ["SALE"],
        "colors": [{"name": "red", "hex": "#d62828", "percentage": 60.0}],
        "composition": {"type": "centered", "lighting": "even", "orientation": "square"},
        "mood": "vibrant and energetic",
        "quality_assessment": {"sharpness": "sharp"},
    }
    prompts = build_prompts(facts)
    assert prompts["general"].startswith("A flat digital illustration")
    assert '"SALE"' in prompts["general"]
    assert "--stylize" in prompts["midjourney"] and "--style raw" not in prompts["midjourney"]
    negative = prompts["stable_diffusion"]["negative"].split(", ")
    assert "photorealistic" in negative and "text" not in negative
