"""Face, hand and person detection on real photographs (mediapipe models from the wheel)."""

from __future__ import annotations

import numpy as np
import pytest
from skimage import data

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime import faces


def photo(name: str) -> ImageArray:
    """A scikit-image sample photo (bundled with the package, no network) as RGB uint8."""
    img = np.asarray(getattr(data, name)(), dtype=np.uint8)
    return np.ascontiguousarray(np.dstack([img] * 3)) if img.ndim == 2 else img


def test_astronaut_face_matches_known_box() -> None:
    img = photo("astronaut")
    found = faces.detect_faces(img)
    assert len(found) == 1
    face = found[0]
    # Reference box measured in docs/models.md: (0.34, 0.13, 0.20 x 0.20) of 512 px.
    ref = (round(0.34 * 512), round(0.13 * 512), round(0.20 * 512), round(0.20 * 512))
    assert faces.iou(face.box, ref) > 0.6
    assert face.score > 0.8
    assert len(face.keypoints) == 6
    # The eyes (keypoints 0 and 1) lie inside the box, in its upper half.
    for x, y in face.keypoints[:2]:
        assert face.x <= x <= face.x + face.w
        assert face.y <= y <= face.y + face.h / 2 + 5


def test_face_found_in_greyscale_photo() -> None:
    found = faces.detect_faces(photo("camera"))
    assert len(found) == 1


@pytest.mark.parametrize("name", ["chelsea", "coffee"])
def test_no_face_hand_or_person_without_people(name: str) -> None:
    img = photo(name)
    assert faces.detect_faces(img) == []
    assert faces.detect_hands(img) == []
    assert faces.detect_people(img) == []


def test_person_box_covers_the_astronaut_face() -> None:
    img = photo("astronaut")
    people = faces.detect_people(img)
    assert people
    person = people[0]
    assert person.source == "pose"
    face = faces.detect_faces(img)[0]
    assert faces.overlap_fraction(face.box, person.box) > 0.9
    # The astronaut fills most of the left two thirds of the frame.
    assert person.area > 0.3 * img.shape[0] * img.shape[1]


def test_rgba_input_and_bad_input() -> None:
    rgba = np.dstack([photo("astronaut"), np.full((512, 512), 255, np.uint8)])
    assert len(faces.detect_faces(rgba)) == 1
    with pytest.raises(ValueError, match="uint8"):
        faces.detect_faces(np.zeros((10, 10), np.uint8))


def test_non_max_suppression_keeps_best_of_overlaps() -> None:
    boxes = [
        faces.DetectedBox(0, 0, 10, 10, 0.5),
        faces.DetectedBox(1, 1, 10, 10, 0.9),
        faces.DetectedBox(50, 50, 10, 10, 0.3),
    ]
    kept = faces.non_max_suppression(boxes, 0.3)
    assert [b.score for b in kept] == [0.9, 0.3]
