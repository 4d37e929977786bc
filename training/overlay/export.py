"""Export a trained OverlayNet checkpoint to ONNX (opset 17, dynamic height/width)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import onnx
import torch
from model import OverlayNet


def save_onnx(module: torch.nn.Module, output: Path, props: dict[str, str]) -> None:
    """Export ``module`` (RGB in, the 7 or 8 outputs out) to ``output`` (opset 17, dynamic
    height and width) with the ``pixelmill_*`` metadata the engine reads."""
    torch.onnx.export(
        module,
        (torch.rand(1, 3, 64, 64),),
        str(output),
        input_names=["rgb"],
        output_names=["alpha_colour_fill"],
        dynamic_axes={"rgb": {2: "h", 3: "w"}, "alpha_colour_fill": {2: "h", 3: "w"}},
        opset_version=17,
        dynamo=False,
    )
    model = onnx.load(str(output))
    for k, v in {"pixelmill_name": "pixelmill-overlay", **props}.items():
        entry = model.metadata_props.add()
        entry.key = k
        entry.value = v
    onnx.checker.check_model(model)
    onnx.save(model, str(output))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("output", type=Path)
    args = ap.parse_args()
    ck = torch.load(args.checkpoint, map_location="cpu", weights_only=False)
    cfg = ck["config"]
    net = OverlayNet.from_config(cfg).eval()
    net.load_state_dict(ck["model"])
    save_onnx(
        net,
        args.output,
        {
            "pixelmill_config": json.dumps(cfg),
            "pixelmill_step": str(ck.get("step", "")),
            "pixelmill_params": str(net.param_count()),
            "pixelmill_macs_per_pixel": str(round(net.macs_per_pixel())),
        },
    )
    print(f"wrote {args.output} ({args.output.stat().st_size} bytes), step {ck.get('step')}")


if __name__ == "__main__":
    main()
