"""Average two networks of one architecture weight by weight (a "model soup"): ``--alpha`` of
the checkpoint's weights plus ``1 - alpha`` of an exported ONNX network's (both trained from
the same parent, so the straight line between them stays a good network). Writes a checkpoint
that ``export.py`` takes. Issue 44 used it between the shipped ×2 mixture and its clean-weighted
continuation, to trade clean-input gain against nearest-neighbour input (README.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

import onnx
import torch
from onnx import numpy_helper


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint", type=Path, help="train.py checkpoint (its config is kept)")
    ap.add_argument("onnx", type=Path, help="export of the same architecture")
    ap.add_argument("output", type=Path)
    ap.add_argument("--alpha", type=float, required=True, help="weight of the checkpoint")
    args = ap.parse_args()
    ck = torch.load(args.checkpoint, map_location="cpu", weights_only=False)
    other = {
        i.name: torch.from_numpy(numpy_helper.to_array(i).copy())
        for i in onnx.load(str(args.onnx)).graph.initializer
    }
    model = ck["model"]
    missing = [k for k in model if k not in other]
    assert not missing, f"not in {args.onnx}: {missing[:5]}"
    ck["model"] = {
        k: args.alpha * v + (1 - args.alpha) * other[k].to(v.dtype).reshape(v.shape)
        for k, v in model.items()
    }
    ck["soup"] = {"alpha": args.alpha, "with": args.onnx.name}
    torch.save(ck, args.output)
    print(
        f"wrote {args.output} ({args.alpha} x {args.checkpoint.name} + the rest {args.onnx.name})"
    )


if __name__ == "__main__":
    main()
