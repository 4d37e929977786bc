"""The compositing kit (``engines/runtime/layers.py``, ``engines/runtime/shadows.py``) draws what
the copies it replaced drew: each shadow, the reflection and the paste of a fixed layer on a
flat canvas match arrays recorded from the scenes compositor and the product-photo stager
before they were merged (``compose_kit_reference.npz``, float16)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from pixelmill.engines.runtime.layers import Layer, coverage, paste, place_layer
from pixelmill.engines.runtime.person import keep_person
from pixelmill.engines.runtime.shadows import (
    add_drop_shadow,
    add_floor_shadow,
    add_reflection,
    cast_shadow,
    contact_shadow,
    floating_shadow,
    shadow_on,
)

F32 = npt.NDArray[np.float32]
REFERENCE = np.load(Path(__file__).with_name("compose_kit_reference.npz"))


def _layer() -> Layer:
    a = np.zeros((45, 30), np.float32)
    cv2.ellipse(a, (15, 22), (12, 20), 0, 0, 360, 1.0, -1, cv2.LINE_AA)
    rgb = np.random.default_rng(3).random((45, 30, 3), dtype=np.float32)
    return Layer(rgb * a[..., None], a, 35, 20)


def _canvas() -> F32:
    return np.full((80, 100, 3), 0.8, np.float32)


def _drawn(name: str) -> F32:
    layer, canvas = _layer(), _canvas()
    if name == "floor":
        add_floor_shadow(canvas, layer, 1.0)
    elif name == "floating":
        floating_shadow(canvas, layer, 4, 0.55)
    elif name == "drop":
        add_drop_shadow(canvas, layer, 1.0)
    elif name == "reflection":
        add_reflection(canvas, layer, 0.5)
    elif name == "shadow_on":
        body = Layer(layer.premult, layer.alpha, 30, 15)
        shadow_on(canvas, layer, coverage((80, 100), body), 0.35)
    else:
        paste(canvas, layer)
    return canvas


@pytest.mark.parametrize("name", ["floor", "floating", "drop", "reflection", "shadow_on", "paste"])
def test_kit_draws_what_the_old_copies_drew(name: str) -> None:
    drawn = _drawn(name)
    recorded = REFERENCE[name].astype(np.float32)
    assert np.abs(drawn - recorded).max() < 2e-3
    assert np.abs(drawn - _canvas()).max() > 0.01  # something was drawn


def test_floor_shadow_is_cast_then_contact() -> None:
    layer, canvas = _layer(), _canvas()
    cast_shadow(canvas, layer)
    only_cast = canvas.copy()
    contact_shadow(canvas, layer)
    assert np.array_equal(canvas, _drawn("floor"))
    assert not np.array_equal(only_cast, canvas)


def test_no_floor_shadow_when_the_base_is_cut_off() -> None:
    layer = _layer()
    canvas = _canvas()
    add_floor_shadow(canvas, Layer(layer.premult, layer.alpha, 35, 40), 1.0)
    assert np.array_equal(canvas, _canvas())


def test_place_layer_scales_into_the_canvas() -> None:
    layer = _layer()
    placed = place_layer(layer.premult, layer.alpha, 2.0, (-10.0, 5.0), (60, 40), margin=1)
    assert placed.alpha.shape[0] <= 92 and placed.alpha.shape[1] <= 62
    assert placed.premult.shape[:2] == placed.alpha.shape
    assert float(placed.alpha.max()) > 0.99
    assert np.all(placed.premult <= placed.alpha[..., None] + 1e-6)


def test_keep_person_threshold_is_a_parameter() -> None:
    """The reference avatar (ratio 10) drops a detached region 50 times smaller than the
    person; the product photo (ratio 400) keeps it, as a drawn avatar's hand."""
    alpha = np.zeros((100, 100), np.float32)
    alpha[10:90, 20:60] = 1.0  # the person, 3200 px, holding the anchor
    alpha[80:88, 80:88] = 1.0  # a detached region, 64 px
    alpha[2:4, 2:4] = 1.0  # a speck, 4 px
    anchors = [(40.0, 50.0)]
    strict = keep_person(alpha, anchors, 10)
    loose = keep_person(alpha, anchors, 400)
    assert strict[84, 84] == 0.0 and loose[84, 84] == 1.0
    assert strict[3, 3] == 0.0 and loose[3, 3] == 0.0
    assert strict[50, 40] == loose[50, 40] == 1.0
