"""Average the weights of two OverlayNets of the same shape ("model soup"): an exported ONNX
model (the one a fine-tune started from) and a fine-tuned checkpoint, ``(1 - w) * A + w * B``.
The result is a checkpoint ``export.py`` takes. One network's cost, unlike an ensemble.

    ../../.venv-train/bin/python soup.py A.onnx runs/v6/final.pt runs/soup.pt --weight 0.5
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from model import OverlayNet
from train import load_onnx_weights


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("onnx", type=Path, help="exported model A")
    ap.add_argument("checkpoint", type=Path, help="checkpoint B (same widths and outputs)")
    ap.add_argument("output", type=Path)
    ap.add_argument("--weight", type=float, default=0.5, help="B's share")
    args = ap.parse_args()
    ck = torch.load(args.checkpoint, map_location="cpu", weights_only=False)
    cfg = ck["config"]
    net = OverlayNet.from_config(cfg)
    load_onnx_weights(net, args.onnx)
    a = net.state_dict()
    b = ck["model"]
    w = args.weight
    soup = {k: (1.0 - w) * a[k] + w * b[k] if a[k].is_floating_point() else b[k] for k in a}
    out = {"model": soup, "config": cfg, "step": f"soup {1 - w:g} A + {w:g} B ({ck['step']})"}
    torch.save(out, args.output)
    print(f"wrote {args.output}: {1 - w:g} x {args.onnx.name} + {w:g} x {args.checkpoint}")


if __name__ == "__main__":
    main()
