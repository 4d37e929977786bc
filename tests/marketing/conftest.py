"""The marketing tests' photos: a real portrait and a real product shot, served on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from skimage import data

from tests.support.images import encode
from tests.support.servers import serve_bytes


def portrait() -> np.ndarray:
    """A real portrait photo (scikit-image's astronaut, bundled: no network)."""
    return np.ascontiguousarray(data.astronaut())  # type: ignore[no-untyped-call]


def product() -> np.ndarray:
    """A real product-like photo without a face (a cup of coffee)."""
    return np.ascontiguousarray(data.coffee())  # type: ignore[no-untyped-call]


@pytest.fixture(scope="module")
def image_server() -> Iterator[str]:
    """Both photos served on 127.0.0.1 (the SSRF guard allows loopback in tests)."""
    routes = {
        "/portrait.png": (200, "image/png", encode(portrait(), "PNG")),
        "/product.jpg": (200, "image/jpeg", encode(product(), "JPEG", quality=92)),
    }
    with serve_bytes(routes) as base:
        yield base
