"""The live app built from settings: ``PIXELMILL_MODELS_DIR`` reaches the upscale, colorize and
enhance engines (a tiny model's answer comes back through ``/api/v2/upscale`` with
``details.model``), and ``PIXELMILL_ONNX_PROVIDERS`` is applied at startup or refused there."""

from __future__ import annotations

import base64
from pathlib import Path

import cv2
import numpy as np
import pytest

from pixelmill.app import create_app
from pixelmill.engines.runtime.onnx import providers, use_providers
from pixelmill.resources import build_resources
from pixelmill.worker import wire
from tests.models import tiny
from tests.support.accounts import make_account
from tests.support.credits import consistent_balance
from tests.support.images import encode, photo_rgb
from tests.support.servers import client_for
from tests.support.settings import make_settings


def test_upscale_through_the_app_uses_the_model_present(database_url: str, tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    tiny.nearest_upscaler(models / "real_esrgan_x2.onnx", 2)
    settings = make_settings(
        database_url, tmp_path / "data", models_dir=models, onnx_providers="cpu"
    )
    res = wire(build_resources(settings))
    try:
        assert providers() == ["CPUExecutionProvider"]
        with client_for(create_app(settings, res)) as client:
            acct = make_account(res, credits=5)
            image = photo_rgb(64, 48)
            r = client.post(
                "/api/v2/upscale",
                json={"image_base64": base64.b64encode(encode(image)).decode(), "scale": 2},
                headers=acct.key_headers,
            )
            assert r.status_code == 200, r.text
            details = r.json()["details"]
            assert details["model"] == "real-esrgan-x2"
            assert "PIXELMILL_MODELS_DIR" in details["method"]
            assert consistent_balance(res, acct.id) == 5 - r.json()["credits_used"]
            result = client.get(r.json()["result_url"])
            assert result.status_code == 200
            decoded = cv2.imdecode(np.frombuffer(result.content, np.uint8), cv2.IMREAD_COLOR)
            sent = cv2.imdecode(np.frombuffer(encode(image), np.uint8), cv2.IMREAD_COLOR)
            assert decoded is not None and sent is not None
            want = np.repeat(np.repeat(sent, 2, axis=0), 2, axis=1)
            assert decoded.shape == want.shape
            assert np.abs(decoded.astype(int) - want).mean() < 2.0  # through the encoder
    finally:
        res.close()
        use_providers(None)


def test_an_execution_provider_this_runtime_lacks_stops_the_startup(
    database_url: str, tmp_path: Path
) -> None:
    settings = make_settings(database_url, tmp_path / "data", onnx_providers="rocm,cpu")
    try:
        with pytest.raises(ValueError, match="PIXELMILL_ONNX_PROVIDERS: rocm is not available"):
            build_resources(settings)
    finally:
        use_providers(None)
