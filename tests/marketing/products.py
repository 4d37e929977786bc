"""Product photos drawn for the ad tests (no downloads): a bottle and a mug on a
white studio background, as shop product shots are."""

from __future__ import annotations

import cv2
import numpy as np


def bottle(w: int = 360, h: int = 480) -> np.ndarray:
    img = np.full((h, w, 3), 250, np.uint8)
    cx = w // 2
    cv2.rectangle(img, (cx - 60, int(0.3 * h)), (cx + 60, int(0.9 * h)), (30, 110, 190), -1)
    cv2.rectangle(img, (cx - 22, int(0.14 * h)), (cx + 22, int(0.3 * h)), (30, 110, 190), -1)
    cv2.rectangle(img, (cx - 26, int(0.1 * h)), (cx + 26, int(0.15 * h)), (20, 20, 24), -1)
    cv2.rectangle(img, (cx - 60, int(0.5 * h)), (cx + 60, int(0.64 * h)), (240, 240, 236), -1)
    return img


def mug(w: int = 420, h: int = 360) -> np.ndarray:
    img = np.full((h, w, 3), 247, np.uint8)
    cv2.rectangle(img, (110, 90), (290, 300), (210, 60, 50), -1)
    cv2.ellipse(img, (290, 190), (60, 55), 0, -90, 90, (210, 60, 50), 22)
    cv2.ellipse(img, (200, 90), (90, 16), 0, 0, 360, (120, 40, 30), -1)
    return img
