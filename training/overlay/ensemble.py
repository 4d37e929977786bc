"""Export the mean of several OverlayNets' outputs as one ONNX model (same input and output as
``export.py``'s, so the engine runs it unchanged). Members are exported ONNX files or
``train.py`` checkpoints of the same widths and outputs. Cost: the members' sum.

    ../../.venv-train/bin/python ensemble.py runs/ensemble.onnx A.onnx runs/v6/final.pt
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import onnx
import torch
from export import save_onnx
from model import OverlayNet
from torch import nn
from train import load_onnx_weights


class Mean(nn.Module):
    def __init__(self, nets: list[OverlayNet]) -> None:
        super().__init__()
        self.nets = nn.ModuleList(nets)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.nets[0](x)
        for net in self.nets[1:]:
            out = out + net(x)
        return out / len(self.nets)


def member(path: Path, cfg: dict[str, object] | None) -> tuple[OverlayNet, dict[str, object]]:
    if path.suffix == ".onnx":
        meta = {p.key: p.value for p in onnx.load(str(path)).metadata_props}
        cfg = cfg or json.loads(meta["pixelmill_config"])
        net = OverlayNet.from_config(cfg)
        load_onnx_weights(net, path)
        return net, cfg
    ck = torch.load(path, map_location="cpu", weights_only=False)
    net = OverlayNet.from_config(ck["config"])
    net.load_state_dict(ck["model"])
    return net, ck["config"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("output", type=Path)
    ap.add_argument("members", type=Path, nargs="+")
    args = ap.parse_args()
    nets = []
    cfg: dict[str, object] | None = None
    for path in args.members:
        net, cfg = member(path, cfg)
        nets.append(net.eval())
    assert cfg is not None
    model = Mean(nets).eval()
    props = {
        "pixelmill_config": json.dumps({**cfg, "members": len(nets)}),
        "pixelmill_step": "mean of " + ", ".join(p.name for p in args.members),
        "pixelmill_params": str(sum(n.param_count() for n in nets)),
        "pixelmill_macs_per_pixel": str(round(sum(n.macs_per_pixel() for n in nets))),
    }
    save_onnx(model, args.output, props)
    print(f"wrote {args.output} ({args.output.stat().st_size} bytes): {props['pixelmill_step']}")


if __name__ == "__main__":
    main()
