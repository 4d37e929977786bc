"""``PIXELMILL_MODELS_DIR``: the bundled U²-Net-p placed there as a rembg-format model is loaded
from there and used by background removal (engine and live app); ``pixelmill models list`` and
``verify`` report name, size, sha256 and input shape; families get their own preparation; a
broken file is skipped rather than breaking the engine."""

from __future__ import annotations

import base64
import hashlib
import shutil
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from pixelmill.cli import app as cli
from pixelmill.engines.background import (
    KNOWN_MODELS,
    BackgroundRemovalEngine,
    BackgroundRemovalParams,
    ModelFile,
    best_model,
    find_models,
)
from pixelmill.engines.background.models import RembgSaliency
from pixelmill.engines.base import EngineInputs
from tests.providers.conftest import RoutedApp
from tests.support.accounts import make_account
from tests.support.credits import consistent_balance
from tests.support.images import encode, product_rgb

BUNDLED = files("rembg") / "u2netp.onnx"


@pytest.fixture
def models_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "models"
    folder.mkdir()
    with BUNDLED.open("rb") as src, (folder / "u2netp.onnx").open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return folder


def test_the_engine_loads_and_uses_the_model_from_the_folder(models_dir: Path) -> None:
    engine = BackgroundRemovalEngine(models_dir)
    image = product_rgb()
    result = engine.run(EngineInputs(image), BackgroundRemovalParams())
    assert engine.saliency is not None
    assert engine.saliency.file.path == models_dir / "u2netp.onnx"
    assert engine.saliency.model.loaded and engine.saliency.model.name == "u2netp.onnx"
    assert result.details["model"] == "u2netp"
    assert "u2netp salient-object mask (PIXELMILL_MODELS_DIR)" in result.details["method"]
    # The same weights through the folder's loader give the packaged engine's cut-out.
    packaged = BackgroundRemovalEngine().run(EngineInputs(image), BackgroundRemovalParams())
    assert "model" not in packaged.details
    ours, theirs = result.images[0].pixels, packaged.images[0].pixels
    assert ours.shape == theirs.shape == (240, 320, 4)
    assert np.abs(ours[..., 3].astype(int) - theirs[..., 3].astype(int)).mean() < 1.0
    assert ours[120, 160, 3] == 255 and ours[3, 3, 3] == 0


def test_background_removal_through_the_app_uses_it(
    routed_app: RoutedApp, models_dir: Path
) -> None:
    with routed_app(models_dir=models_dir) as (client, res):
        acct = make_account(res, credits=3)
        r = client.post(
            "/api/v2/remove-background",
            json={"image_base64": base64.b64encode(encode(product_rgb())).decode()},
            headers=acct.key_headers,
        )
        assert r.status_code == 200, r.text
        assert r.json()["details"]["model"] == "u2netp"
        assert consistent_balance(res, acct.id) == 2


def test_best_present_and_broken_files(models_dir: Path) -> None:
    (models_dir / "u2net.onnx").write_bytes(b"not an onnx model")  # truncated download
    (models_dir / "isnet-anime.onnx").write_bytes(b"specialist")  # never chosen by itself
    (models_dir / "mystery.onnx").write_bytes(b"?")
    names = [m.name for m in find_models(models_dir)]
    assert names[0] == "u2net" and names[-1] == "mystery"
    chosen = best_model(models_dir)
    assert chosen is not None and chosen.name == "u2netp"  # the broken u2net is skipped
    engine = BackgroundRemovalEngine(models_dir)
    engine.load()
    assert engine.saliency is not None and engine.saliency.name == "u2netp"


def test_each_family_is_prepared_its_own_way(models_dir: Path) -> None:
    pixel = np.full((4, 4, 3), 255, np.uint8)
    u2 = RembgSaliency(ModelFile("u2netp", models_dir / "u2netp.onnx", KNOWN_MODELS["u2netp"]))
    isnet = RembgSaliency(
        ModelFile("isnet-general-use", models_dir / "x.onnx", KNOWN_MODELS["isnet-general-use"])
    )
    a, b = u2.prepare(pixel), isnet.prepare(pixel)
    assert a.shape == (1, 3, 320, 320) and b.shape == (1, 3, 1024, 1024)
    # ImageNet mean/std for U²-Net; mean 0.5, std 1 for IS-Net.
    assert np.allclose(a[0, :, 0, 0], (1 - np.array([0.485, 0.456, 0.406])) / [0.229, 0.224, 0.225])
    assert np.allclose(b[0, :, 0, 0], 0.5)
    assert KNOWN_MODELS["birefnet-general"].sigmoid and not KNOWN_MODELS["u2net"].sigmoid


def test_models_list_and_verify(models_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    env = {"PIXELMILL_MODELS_DIR": str(models_dir), "PIXELMILL_DATA_DIR": str(tmp_path / "d")}
    digest = hashlib.sha256((models_dir / "u2netp.onnx").read_bytes()).hexdigest()
    size = (models_dir / "u2netp.onnx").stat().st_size
    out = runner.invoke(cli, ["models", "list"], env=env)
    assert out.exit_code == 0, out.output
    assert f"u2netp  family=u2net  size={size}  sha256={digest}  input=[1, 3, 320, 320]" in (
        out.output
    )
    assert "used by background removal" in out.output
    out = runner.invoke(cli, ["models", "verify"], env=env)
    assert out.exit_code == 0, out.output
    assert "u2netp  ok" in out.output
    (models_dir / "u2net.onnx").write_bytes(b"broken")
    out = runner.invoke(cli, ["models", "verify"], env=env)
    assert out.exit_code == 1
    assert "u2net  FAILED: cannot open" in out.output
