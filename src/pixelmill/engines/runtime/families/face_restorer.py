"""GFPGAN and CodeFormer exported to ONNX by FaceFusion (the ``gfpgan`` family), run as
FaceFusion's face enhancer runs them (``facefusion/processors/modules/face_enhancer/core.py``,
``enhance_face``, ``prepare_crop_frame``, ``normalize_crop_frame``):

- each face is warped onto the 512² FFHQ template (``facefusion/face_helper.py``, ``ffhq_512``)
  by a similarity transform fitted to its landmarks (``estimateAffinePartial2D``, RANSAC);
- the crop goes in as ``input``, RGB scaled to -1..1, NCHW (CodeFormer also takes ``weight``,
  its fidelity, a double; FaceFusion's default 0.5);
- the output, RGB in -1..1, is clipped, brought back to 0..255 and warped back into the image
  through FaceFusion's box mask (``facefusion/face_masker.py``, ``create_box_mask``: blur 0.3),
  blended at 80 % (its ``--face-enhancer-blend`` default).

FaceFusion fits five landmarks (eyes, nose, mouth corners); the detector here (mediapipe's, in
``runtime/faces.py``) gives eyes, nose tip and the mouth's centre, so the fit uses those four,
the mouth's centre matched to the midpoint of the template's mouth corners.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from pixelmill.engines.base import ImageArray
from pixelmill.engines.runtime.onnx import OnnxModel

SIDE = 512
FFHQ_512 = np.array(
    [
        [0.37691676, 0.46864664],  # the eye on the image's left
        [0.62285697, 0.46912813],  # the eye on the image's right
        [0.50123859, 0.61331904],  # nose tip
        [0.39308822, 0.72541100],  # mouth corner, image left
        [0.61150205, 0.72490465],  # mouth corner, image right
    ],
    np.float32,
)
TEMPLATE = np.vstack([FFHQ_512[:3], FFHQ_512[3:].mean(axis=0)]) * SIDE
"""Eyes, nose and the mouth's centre on the 512² crop."""
MASK_BLUR = 0.3
BLEND = 0.8
WEIGHT = 0.5

Landmarks = Sequence[tuple[float, float]]
"""The image-left eye, the image-right eye, the nose tip and the mouth's centre, in pixels."""
FloatImage = npt.NDArray[np.float32]


def box_mask() -> FloatImage:
    """FaceFusion's box mask for a 512² crop: zero on a border of ``blur / 2``, blurred."""
    amount = int(SIDE * 0.5 * MASK_BLUR)
    area = max(amount // 2, 1)
    mask = np.ones((SIDE, SIDE), np.float32)
    mask[:area], mask[-area:], mask[:, :area], mask[:, -area:] = 0, 0, 0, 0
    return np.asarray(cv2.GaussianBlur(mask, (0, 0), amount * 0.25), dtype=np.float32)


class FaceRestorer:
    """A GFPGAN or CodeFormer ONNX file: :meth:`restore` restores the faces at the landmarks."""

    def __init__(self, path: Path, name: str):
        self.name = name
        self.model = OnnxModel(path)
        self.has_weight = False
        self.blend = BLEND

    def load(self) -> None:
        """Open the session and check its input is 1×3×512×512."""
        self.model.load()
        inputs = {i.name: list(i.shape) for i in self.model.session.get_inputs()}
        shape = inputs.get("input")
        if shape is None or len(shape) != 4 or shape[1:] != [3, SIDE, SIDE]:
            raise ValueError(f"{self.name}: expected input 1x3x512x512, got {inputs}")
        self.has_weight = "weight" in inputs

    def _run(self, crop: FloatImage) -> FloatImage:
        x = (crop / 255.0 - 0.5) / 0.5
        feeds = {"input": np.ascontiguousarray(x.transpose(2, 0, 1)[np.newaxis], np.float32)}
        if self.has_weight:
            feeds["weight"] = np.array([WEIGHT], np.float64)
        y = np.clip(self.model.run(feeds)[0][0], -1.0, 1.0)
        return np.asarray((y.transpose(1, 2, 0) + 1.0) / 2.0 * 255.0, dtype=np.float32)

    def restore(self, rgb: ImageArray, faces: Sequence[Landmarks]) -> ImageArray:
        """``rgb`` (``uint8`` H×W×3) with each face restored and blended back."""
        out = rgb.astype(np.float32)
        h, w = rgb.shape[:2]
        mask = box_mask()
        for points in faces:
            src = np.asarray(points, np.float32).reshape(4, 2)
            matrix = cv2.estimateAffinePartial2D(
                src, TEMPLATE, method=cv2.RANSAC, ransacReprojThreshold=100
            )[0]
            if matrix is None:
                continue
            crop = cv2.warpAffine(
                out, matrix, (SIDE, SIDE), borderMode=cv2.BORDER_REPLICATE, flags=cv2.INTER_AREA
            )
            restored = self._run(np.asarray(crop, np.float32))
            inverse = cv2.invertAffineTransform(matrix)
            back = cv2.warpAffine(restored, inverse, (w, h), borderMode=cv2.BORDER_REPLICATE)
            weight = cv2.warpAffine(mask, inverse, (w, h)).clip(0, 1)[..., np.newaxis]
            weight = weight * self.blend
            out = np.asarray(out * (1.0 - weight) + back * weight, dtype=np.float32)
        return np.asarray(np.clip(np.round(out), 0, 255), dtype=np.uint8)
