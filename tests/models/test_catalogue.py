"""The catalogue (``pixelmill models catalog``), ``models list`` and ``models verify`` over every
family, and ``PIXELMILL_ONNX_PROVIDERS``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import onnxruntime as ort
import pytest
from typer.testing import CliRunner

from pixelmill.cli import app as cli
from pixelmill.engines.runtime.onnx import OnnxModel, parse_providers, providers, use_providers
from pixelmill.models import CATALOGUE
from tests.models import tiny
from tests.models.tiny import REMBG_U2NETP

KEYS = {
    "name",
    "operations",
    "family",
    "file",
    "size",
    "sha256",
    "licence",
    "commercial_use",
    "url",
}


def test_the_catalogue_covers_every_operation_with_checkable_digests() -> None:
    out = CliRunner().invoke(cli, ["models", "catalog", "--json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    assert [r["name"] for r in rows] == [e.name for e in CATALOGUE]
    names = {r["name"] for r in rows}
    assert {"birefnet-general", "birefnet-general-lite", "isnet-general-use", "u2net"} <= names
    assert {"lama", "real-esrgan-x2", "gfpgan-1.4", "codeformer", "ddcolor-artistic"} <= names
    served = {op for r in rows for op in r["operations"]}
    assert served == {"background_removal", "inpaint", "upscale", "enhance", "colorize"}
    for row in rows:
        assert set(row) >= KEYS
        assert re.fullmatch(r"[0-9a-f]{64}", row["sha256"]), row["name"]
        assert row["url"].startswith("https://") and row["file"].endswith(".onnx")
        assert row["size"] is None or row["size"] > 1_000_000
    assert len({r["file"] for r in rows}) == len(rows)
    codeformer = next(r for r in rows if r["name"] == "codeformer")
    assert codeformer["commercial_use"] is False and "S-Lab" in codeformer["licence"]
    text = CliRunner().invoke(cli, ["models", "catalog"]).output
    assert "codeformer" in text and "NON-COMMERCIAL" in text


def test_list_and_verify_cover_every_family(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    packaged = REMBG_U2NETP
    shutil.copyfile(packaged, models / "u2netp.onnx")
    tiny.nearest_upscaler(models / "real_esrgan_x2.onnx", 2)
    tiny.inpainter(models / "lama_fp32.onnx")
    tiny.colorizer(models / "ddcolor_artistic.onnx", 10.0, 20.0)
    tiny.face_restorer(models / "gfpgan_1.4.onnx")
    env = {"PIXELMILL_MODELS_DIR": str(models), "PIXELMILL_DATA_DIR": str(tmp_path / "d")}
    out = CliRunner().invoke(cli, ["models", "list"], env=env)
    assert out.exit_code == 0, out.output
    assert "u2netp  family=u2net" in out.output and "used by background removal" in out.output
    for name, op in (
        ("lama", "inpaint"),
        ("real-esrgan-x2", "upscale"),
        ("ddcolor", "colorize"),
        ("gfpgan-1.4", "enhance"),
    ):
        line = next(x for x in out.output.splitlines() if x.startswith(name))
        assert f"used by {op}" in line
    out = CliRunner().invoke(cli, ["models", "verify"], env=env)
    # The tiny stand-ins open and run, but they are not the catalogued files.
    assert out.exit_code == 1, out.output
    assert re.search(r"^u2netp  ok .*sha256=309c8469", out.output, re.MULTILINE)
    (models / "codeformer.onnx").write_bytes(b"cut short")
    out = CliRunner().invoke(cli, ["models", "verify"], env=env)
    assert "codeformer  FAILED: sha256" in out.output and "does not run" in out.output
    for name in ("lama", "real-esrgan-x2", "ddcolor-artistic", "gfpgan-1.4"):
        assert re.search(
            rf"^{name}  FAILED: sha256 [0-9a-f]{{64}}, the catalogue says [0-9a-f]{{64}}  size=",
            out.output,
            re.MULTILINE,
        )
    (models / "real_esrgan_x2.onnx").unlink()
    (models / "lama_fp32.onnx").unlink()
    (models / "ddcolor_artistic.onnx").unlink()
    (models / "gfpgan_1.4.onnx").unlink()
    (models / "codeformer.onnx").unlink()
    out = CliRunner().invoke(cli, ["models", "verify"], env=env)
    assert out.exit_code == 0, out.output


def test_onnx_providers_default_to_what_is_installed_and_refuse_what_is_not() -> None:
    available = ort.get_available_providers()
    want = ["CUDAExecutionProvider"] if "CUDAExecutionProvider" in available else []
    assert parse_providers(None) == [*want, "CPUExecutionProvider"]
    assert parse_providers(" cpu ") == ["CPUExecutionProvider"]
    with pytest.raises(ValueError, match=r"not available.*available: "):
        parse_providers("tensorrt" if "TensorrtExecutionProvider" not in available else "nope")
    try:
        assert use_providers("CPUExecutionProvider") == ["CPUExecutionProvider"]
        assert providers() == ["CPUExecutionProvider"]
        model = OnnxModel(REMBG_U2NETP)
        assert model.session.get_providers() == ["CPUExecutionProvider"]
    finally:
        use_providers(None)
