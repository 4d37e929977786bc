"""``PIXELMILL_BACKEND_PROFILE`` routes every operation a backend serves in one step (an explicit
route overrides one operation; no setting changes nothing), and the shipped ComfyUI workflows
are well-formed, use only placeholders the adapter fills for their operation, and pass the
startup check a route makes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pixelmill.config import Settings
from pixelmill.engines.registry import HOSTED, PROFILES, build_engines
from pixelmill.engines.runtime.hosted import HostedEngine
from pixelmill.providers.comfyui import SHIPPED, placeholders
from pixelmill.resources import route_engines

FILLED = {
    "scenes": {"image", "mask", "prompt", "negative_prompt", "seed", "width", "height"},
    "avatar_guided": {"prompt", "negative_prompt", "seed", "width", "height"},
    "avatar_reference": {"image", "prompt", "negative_prompt", "seed", "width", "height"},
    "edit": {"image", "prompt", "negative_prompt", "seed"},
    "image_to_image": {"image", "prompt", "negative_prompt", "seed"},
    "upscale": {"image", "prompt", "negative_prompt", "seed"},
    "product_photo": {"image", "product", "prompt", "negative_prompt", "seed", "width", "height"},
    "tryon": {"image", "garment", "prompt", "negative_prompt", "seed"},
}
"""What each operation's hosted engine fills in a ComfyUI workflow (its ``_comfyui`` call)."""


def _routed(engines: dict[str, object]) -> dict[str, str]:
    return {
        op: engine.route.label for op, engine in engines.items() if isinstance(engine, HostedEngine)
    }


def test_the_openai_profile_alone_routes_every_operation_it_serves(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, backend_profile="openai", openai_api_key="sk-x")
    engines, backends = route_engines(build_engines(), settings)
    assert backends is not None
    routed = _routed(dict(engines))
    assert routed == PROFILES["openai"]
    for op in ("scenes", "avatar_guided", "avatar_reference", "product_photo", "speech"):
        assert routed[op].startswith("openai:")
    backends.close()


def test_an_explicit_route_overrides_the_profile_and_no_setting_routes_nothing(
    tmp_path: Path,
) -> None:
    settings = Settings(
        data_dir=tmp_path,
        backend_profile="openai",
        routes={"scenes": "replicate:black-forest-labs/flux-fill-dev"},
        replicate_api_token="r8_x",
    )
    engines, backends = route_engines(build_engines(), settings)
    assert backends is not None
    routed = _routed(dict(engines))
    assert routed["scenes"] == "replicate:black-forest-labs/flux-fill-dev"
    assert routed["avatar_guided"] == "openai:gpt-image-1"
    backends.close()
    plain, none = route_engines(build_engines(), Settings(data_dir=tmp_path))
    assert none is None and not _routed(dict(plain))


def test_profile_routes_need_their_providers_settings(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="PIXELMILL_REPLICATE_API_TOKEN"):
        route_engines(build_engines(), Settings(data_dir=tmp_path, backend_profile="replicate"))
    with pytest.raises(ValueError, match="PIXELMILL_COMFYUI_URL"):
        route_engines(build_engines(), Settings(data_dir=tmp_path, backend_profile="comfyui"))


def test_every_profile_route_is_routable(tmp_path: Path) -> None:
    for name, table in PROFILES.items():
        for op, spec in table.items():
            assert op in HOSTED, (name, op)
            provider = spec.split(":", 1)[0]
            assert provider in HOSTED[op].providers, (name, op, provider)


def test_the_comfyui_profile_runs_on_the_shipped_workflows(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path, backend_profile="comfyui", comfyui_url="http://127.0.0.1:9"
    )
    engines, backends = route_engines(build_engines(), settings)  # the startup checks pass
    assert backends is not None
    assert set(_routed(dict(engines))) == set(PROFILES["comfyui"])
    # An operator's file of the same name wins over the shipped one.
    own = tmp_path / "flows"
    own.mkdir()
    (own / "upscale.json").write_text('{"1": {"class_type": "Mine", "inputs": {"i": "{{image}}"}}}')
    mine = Settings(
        data_dir=tmp_path,
        backend_profile="comfyui",
        comfyui_url="http://127.0.0.1:9",
        comfyui_workflows=own,
    )
    engines, custom = route_engines(build_engines(), mine)
    assert custom is not None
    assert custom.get_comfyui().workflow("upscale.json")["1"]["class_type"] == "Mine"
    assert custom.get_comfyui().workflow("scenes.json") == json.loads(
        (SHIPPED / "scenes.json").read_text()
    )
    backends.close()
    custom.close()


@pytest.mark.parametrize("path", sorted(SHIPPED.glob("*.json")), ids=lambda p: p.name)
def test_a_shipped_workflow_is_well_formed(path: Path) -> None:
    flow = json.loads(path.read_text())
    assert isinstance(flow, dict) and flow
    for node_id, node in flow.items():
        assert isinstance(node, dict) and isinstance(node.get("class_type"), str), node_id
        for value in node.get("inputs", {}).values():
            if isinstance(value, list):  # a link: [node id, output index]
                assert value[0] in flow and isinstance(value[1], int), (node_id, value)
    assert any(n["class_type"] == "SaveImage" for n in flow.values())
    operations = [op for op, spec in PROFILES["comfyui"].items() if spec == f"comfyui:{path.name}"]
    assert operations, f"{path.name} is not in the comfyui profile"
    for op in operations:
        assert placeholders(flow) <= FILLED[op], (op, placeholders(flow) - FILLED[op])
        assert HOSTED[op].workflow_inputs <= placeholders(flow)
