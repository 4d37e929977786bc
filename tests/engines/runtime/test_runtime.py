"""Tests for the shared engine runtime: the lazy loader, lazy ONNX sessions and the process-wide
OCR instance."""

from __future__ import annotations

import threading
from collections.abc import Callable

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from skimage import data

from pixelmill.engines.runtime.lazy import Lazy
from pixelmill.engines.runtime.ocr import detect_text_boxes, read_text
from pixelmill.engines.runtime.onnx import OnnxModel, packaged_file


def photo(name: str) -> npt.NDArray[np.uint8]:
    """A bundled scikit-image sample photo (offline) as a typed uint8 array."""
    return np.ascontiguousarray(getattr(data, name)(), dtype=np.uint8)


def at_once(get: Callable[[], object], threads: int = 4) -> list[object]:
    """What ``get`` returns in each of ``threads`` threads released together."""
    got: list[object] = []
    barrier = threading.Barrier(threads)

    def grab() -> None:
        barrier.wait()
        got.append(get())

    started = [threading.Thread(target=grab) for _ in range(threads)]
    for t in started:
        t.start()
    for t in started:
        t.join()
    return got


def test_onnx_model_is_lazy_and_created_once_across_threads() -> None:
    model = OnnxModel(packaged_file("rembg", "u2netp.onnx"))
    assert not model.loaded
    assert model.name == "u2netp.onnx"

    sessions = at_once(lambda: model.session)

    assert model.loaded
    assert len(sessions) == 4
    assert all(s is sessions[0] for s in sessions)
    opts = model.session.get_session_options()
    assert opts.intra_op_num_threads == 2
    assert model.session.get_providers() == ["CPUExecutionProvider"]


def test_onnx_model_runs_packaged_u2netp() -> None:
    model = OnnxModel(packaged_file("rembg", "u2netp.onnx"))
    x = np.zeros((1, 3, 320, 320), dtype=np.float32)
    outputs = model.run_single(x)
    assert outputs[0].shape == (1, 1, 320, 320)
    assert np.isfinite(outputs[0]).all()


def test_onnx_model_missing_file_fails_on_first_use() -> None:
    model = OnnxModel(packaged_file("rembg", "no-such-model.onnx"))
    with pytest.raises(Exception, match="no-such-model"):
        model.load()


def _photo_with_text(text: str) -> tuple[np.ndarray, np.ndarray]:
    """A real photo with white ``text`` drawn on it, and the boolean mask of the text pixels."""
    clean = np.ascontiguousarray(photo("astronaut")[:384, :384])
    img = clean.copy()
    cv2.putText(
        img, text, (24, 210), cv2.FONT_HERSHEY_SIMPLEX, 1.3, (255, 255, 255), 3, cv2.LINE_AA
    )
    return img, np.any(img != clean, axis=2)


def test_detect_text_boxes_covers_rendered_text() -> None:
    img, text_mask = _photo_with_text("PIXEL MILL")
    boxes = detect_text_boxes(img)
    assert 1 <= len(boxes) <= 3
    assert all(len(box) == 4 for box in boxes)
    inside = np.zeros(text_mask.shape, np.uint8)
    for box in boxes:
        cv2.fillPoly(inside, [np.round(np.array(box)).astype(np.int32)], 1)
    covered = float((inside.astype(bool) & text_mask).sum()) / float(text_mask.sum())
    assert covered >= 0.95
    # The boxes hug the text: they cover at most three times its bounding box.
    ys, xs = np.nonzero(text_mask)
    text_bbox_area = (np.ptp(xs) + 1) * (np.ptp(ys) + 1)
    assert inside.sum() <= 3 * text_bbox_area


def test_read_text_reads_rendered_text_and_accepts_rgba() -> None:
    img, _ = _photo_with_text("PIXEL MILL")
    lines = read_text(img)
    joined = " ".join(line.text for line in lines).replace(" ", "").upper()
    assert "PIXELMILL" in joined
    assert all(0.5 <= line.confidence <= 1.0 for line in lines)

    rgba = np.dstack([img, np.full(img.shape[:2], 255, np.uint8)])
    rgba_lines = read_text(rgba)
    assert "PIXELMILL" in " ".join(t.text for t in rgba_lines).replace(" ", "").upper()


def test_no_text_on_photos_without_text() -> None:
    assert detect_text_boxes(photo("astronaut")) == []
    assert read_text(photo("astronaut")) == []
    # The detector alone fires on the cat's fur (a known weakness); recognition rejects it.
    assert read_text(photo("chelsea")) == []


def test_lazy_builds_once_across_threads_and_retries_after_a_failure() -> None:
    calls: list[int] = []

    def build() -> object:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("first build fails")
        return object()

    lazy: Lazy[object] = Lazy(build)
    with pytest.raises(RuntimeError):
        lazy.get()
    assert not lazy.loaded

    got = at_once(lazy.get)
    assert lazy.loaded
    assert len(calls) == 2
    assert len(got) == 4 and all(g is got[0] for g in got)
