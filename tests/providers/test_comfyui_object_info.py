"""Every shipped ComfyUI workflow, filled as the adapter fills it, checked offline against the
``/object_info`` of a real ComfyUI server (tests/providers/data/comfyui_object_info.json, written
by ``scripts/validate-comfyui --save-object-info``: the node classes the workflows use, with the
server's commit and version): node classes, required inputs, input types, link types, value
ranges and model names; the model files they load are in deploy/comfyui/models.json; and the
checker itself finds each kind of mistake."""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pixelmill.engines.registry import PROFILES
from pixelmill.providers.comfyui import SHIPPED, check_workflow, placeholders, substitute

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((Path(__file__).with_name("data") / "comfyui_object_info.json").read_text())
OBJECT_INFO: dict[str, Any] = DATA["object_info"]
MANIFEST = json.loads((ROOT / "deploy" / "comfyui" / "models.json").read_text())["models"]
WORKFLOWS = sorted(SHIPPED.glob("*.json"))
MODEL_FILE = re.compile(r"\.(safetensors|ckpt|pth|pt|bin|gguf)$")


@cache
def _script() -> ModuleType:
    """scripts/validate-comfyui as a module: its sample inputs are the ones it posts."""
    loader = SourceFileLoader("validate_comfyui", str(ROOT / "scripts" / "validate-comfyui"))
    spec = spec_from_loader("validate_comfyui", loader)
    assert spec is not None
    module = module_from_spec(spec)
    loader.exec_module(module)
    return module


def filled(path: Path) -> dict[str, Any]:
    """``path`` filled with the sample values the validation script sends, each uploaded image
    standing for the name the server's upload answer gives."""
    images, values = _script().sample_inputs(path.name)
    names = {key: f"pixelmill-{key}.png" for key in images}
    flow: dict[str, Any] = substitute(json.loads(path.read_text()), {**values, **names})
    return flow


def test_the_object_info_comes_from_a_pinned_comfyui() -> None:
    about = DATA["about"]
    assert re.fullmatch(r"[0-9a-f]{40}", about["commit"])
    assert about["comfyui_version"] and about["pytorch_version"]
    used = {
        node["class_type"] for path in WORKFLOWS for node in json.loads(path.read_text()).values()
    }
    assert used <= set(OBJECT_INFO), used - set(OBJECT_INFO)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_a_shipped_workflow_passes_the_servers_node_definitions(path: Path) -> None:
    flow = filled(path)
    assert not placeholders(flow), "the sample inputs fill every placeholder"
    assert check_workflow(flow, OBJECT_INFO) == []


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_the_sample_inputs_are_what_the_operations_engine_fills(path: Path) -> None:
    images, values = _script().sample_inputs(path.name)
    sent = set(images) | set(values)
    assert placeholders(json.loads(path.read_text())) <= sent
    ops = [op for op, spec in PROFILES["comfyui"].items() if spec == f"comfyui:{path.name}"]
    assert ops, f"{path.name} is not routed by the comfyui profile"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_model_file_a_workflow_loads_is_in_the_fetch_manifest(path: Path) -> None:
    flow = json.loads(path.read_text())
    loaded = {
        value
        for node in flow.values()
        for value in node["inputs"].values()
        if isinstance(value, str) and MODEL_FILE.search(value)
    }
    assert loaded
    listed = {entry["file"]: entry for entry in MANIFEST}
    for name in loaded:
        assert name in listed, name
        assert path.name in listed[name]["workflows"]


def test_the_manifest_pins_digests_it_can_cite_and_no_others() -> None:
    for entry in MANIFEST:
        assert entry["url"].startswith("https://"), entry["file"]
        if entry["sha256"] is None:
            assert entry["digest_source"] is None, entry["file"]
            continue
        assert re.fullmatch(r"[0-9a-f]{64}", entry["sha256"]), entry["file"]
        assert entry["digest_source"], entry["file"]
    with_digest = [e["file"] for e in MANIFEST if e["sha256"]]
    assert len({e["sha256"] for e in MANIFEST if e["sha256"]}) == len(with_digest)


def _mutated(change: str) -> list[str]:
    flow = filled(SHIPPED / "scenes.json")
    broken = copy.deepcopy(flow)
    if change == "link type":
        broken["7"]["inputs"]["model"] = ["1", 1]  # the checkpoint's CLIP, not its MODEL
    elif change == "missing input":
        del broken["7"]["inputs"]["steps"]
    elif change == "unknown class":
        broken["5"]["class_type"] = "LoadImageMaskPlus"
    elif change == "unknown input":
        broken["4"]["inputs"]["upload"] = "image"
    elif change == "choice":
        broken["7"]["inputs"]["sampler_name"] = "dpm_2m_turbo"
    elif change == "model name":
        broken["1"]["inputs"]["ckpt_name"] = "sd-v1-5-inpainting.safetensors"
    elif change == "range":
        broken["7"]["inputs"]["seed"] = -1
    elif change == "type":
        broken["7"]["inputs"]["steps"] = "30"
    elif change == "literal for link":
        broken["8"]["inputs"]["vae"] = "sd-v1-5-inpainting.ckpt"
    elif change == "dangling link":
        broken["8"]["inputs"]["samples"] = ["99", 0]
    elif change == "output index":
        broken["8"]["inputs"]["vae"] = ["1", 3]
    elif change == "unfilled":
        broken["4"]["inputs"]["image"] = "{{person}}"
    elif change == "no output":
        del broken["9"]
    return check_workflow(broken, OBJECT_INFO)


@pytest.mark.parametrize(
    ("change", "found"),
    [
        ("link type", "input model: takes MODEL, linked to a CLIP output"),
        ("missing input", "(KSampler): required input steps is missing"),
        ("unknown class", "LoadImageMaskPlus is not a node class on the server"),
        ("unknown input", "LoadImage has no input upload"),
        ("choice", "'dpm_2m_turbo' is not one of"),
        ("model name", "'sd-v1-5-inpainting.safetensors' is not one of"),
        ("range", "input seed: -1 is outside 0..18446744073709551615"),
        ("type", "input steps: takes INT, got '30'"),
        ("literal for link", "input vae: takes a VAE link, got the literal"),
        ("dangling link", "link ['99', 0] names no node"),
        ("output index", "node 1 has no output 3"),
        ("unfilled", "the placeholder in '{{person}}' was not filled"),
        ("no output", "no output node"),
    ],
)
def test_the_checker_finds_each_kind_of_mistake(change: str, found: str) -> None:
    problems = _mutated(change)
    assert any(found in p for p in problems), problems
