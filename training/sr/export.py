"""Export a trained SRNet checkpoint to ONNX (opset 17, dynamic height/width)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import onnx
import torch
from model import SRNet


def export(net: SRNet, path: Path, meta: dict[str, str] | None = None) -> None:
    net = net.eval()
    m = net.margin
    dummy = torch.rand(1, 1, 64 + 2 * m, 64 + 2 * m)
    # A context network takes the image statistics as a second input, ``stats`` (1, STATS).
    inputs: tuple[torch.Tensor, ...] = (dummy,)
    names = ["y_lr"]
    if net.context:
        inputs = (dummy, torch.zeros(1, net.context))
        names.append("stats")
    torch.onnx.export(
        net,
        inputs,
        str(path),
        input_names=names,
        output_names=["y_hr"],
        dynamic_axes={"y_lr": {2: "h", 3: "w"}, "y_hr": {2: "H", 3: "W"}},
        opset_version=17,
        dynamo=False,
    )
    model = onnx.load(str(path))
    props = {"pixelmill_config": json.dumps(net.config()), **(meta or {})}
    for k, v in props.items():
        entry = model.metadata_props.add()
        entry.key = k
        entry.value = v
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("output", type=Path)
    ap.add_argument("--name", default=None, help="pixelmill_name (default pixelmill-sr-x<scale>)")
    args = ap.parse_args()
    ck = torch.load(args.checkpoint, map_location="cpu", weights_only=False)
    cfg = ck["config"]
    net = SRNet(
        cfg["scale"],
        cfg["channels"],
        cfg["depth"],
        cfg["head_kernel"],
        ck.get("rep", False),
        context=cfg.get("context", 0),
    )
    net.load_state_dict(ck["model"])
    net = net.plain()
    meta = {
        "pixelmill_name": args.name or f"pixelmill-sr-x{cfg['scale']}",
        "pixelmill_step": str(ck.get("step", "")),
        "pixelmill_params": str(net.param_count()),
        "pixelmill_macs_per_input_pixel": str(net.macs_per_input_pixel()),
    }
    export(net, args.output, meta)
    print(f"wrote {args.output} ({args.output.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
