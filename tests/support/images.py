"""Small real test images, made on the fly (nothing downloaded)."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image
from skimage import data as skdata


def product_rgb(w: int = 320, h: int = 240) -> np.ndarray:
    """A blue bottle-like shape with a red cap on a light grey gradient: a clear subject."""
    y = np.linspace(0, 1, h, dtype=np.float32)[:, None]
    bg = (225 - 25 * y) * np.ones((h, w), np.float32)
    img = np.stack([bg, bg, bg + 3], axis=-1)
    cx, top, bottom, half = w // 2, h // 5, h - h // 8, w // 8
    img[top + h // 10 : bottom, cx - half : cx + half] = (40, 100, 170)
    img[top : top + h // 10, cx - half // 2 : cx + half // 2] = (200, 60, 50)
    return np.clip(img, 0, 255).astype(np.uint8)


def photo_rgb(w: int = 300, h: int = 200) -> np.ndarray:
    coffee: np.ndarray = skdata.coffee()  # type: ignore[no-untyped-call]
    img = Image.fromarray(coffee).resize((w, h), Image.Resampling.LANCZOS)
    return np.asarray(img)


def encode(pixels: np.ndarray, fmt: str = "PNG", **kwargs: object) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, fmt, **kwargs)
    return buf.getvalue()


def png_bytes(w: int = 320, h: int = 240) -> bytes:
    return encode(product_rgb(w, h))


def jpeg_bytes(w: int = 300, h: int = 200) -> bytes:
    return encode(photo_rgb(w, h), "JPEG", quality=90)


def decode(data: bytes) -> Image.Image:
    im = Image.open(io.BytesIO(data))
    im.load()
    return im
