"""Export a trained InpaintNet checkpoint to ONNX (opset 17, dynamic height/width)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import onnx
import torch
from gated import InpaintNet, parameters


def macs_per_pixel(net: InpaintNet) -> int:
    """Multiply-accumulates per input pixel (each convolution at its own resolution)."""
    total = 0.0
    for name, mod in net.named_modules():
        if isinstance(mod, torch.nn.Conv2d):
            scale = 1.0
            if name.startswith(("e1.", "u1.")):
                scale = 1 / 4
            elif name.startswith(("e2.", "mid.")):
                scale = 1 / 16
            k = mod.kernel_size[0] * mod.kernel_size[1]
            total += scale * mod.in_channels * mod.out_channels * k
    return round(total)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("output", type=Path)
    args = ap.parse_args()
    ck = torch.load(args.checkpoint, map_location="cpu", weights_only=False)
    net = InpaintNet().eval()
    net.load_state_dict(ck["model"])
    dummy = torch.rand(1, 4, 64, 64)
    torch.onnx.export(
        net,
        (dummy,),
        str(args.output),
        input_names=["first_fill_and_mask"],
        output_names=["rgb"],
        dynamic_axes={"first_fill_and_mask": {2: "h", 3: "w"}, "rgb": {2: "h", 3: "w"}},
        opset_version=17,
        dynamo=False,
    )
    model = onnx.load(str(args.output))
    props = {
        "pixelmill_name": "pixelmill-inpaint",
        "pixelmill_config": json.dumps({"widths": net.widths, "out_width": net.out_width}),
        "pixelmill_step": str(ck.get("step", "")),
        "pixelmill_params": str(parameters(net)),
        "pixelmill_macs_per_pixel": str(macs_per_pixel(net)),
    }
    for k, v in props.items():
        entry = model.metadata_props.add()
        entry.key = k
        entry.value = v
    onnx.checker.check_model(model)
    onnx.save(model, str(args.output))
    print(f"wrote {args.output} ({args.output.stat().st_size} bytes), step {ck.get('step')}")
    print(props)


if __name__ == "__main__":
    main()
