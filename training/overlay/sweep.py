"""Evaluate a checkpoint on all held-out pairs for several inference settings (the opacity
below which pixels are kept, and the fill: network head or OpenCV Telea), per kind."""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np
import torch
from data import KINDS, split, validation_pairs
from model import THRESHOLD, OverlayNet
from train import predict, psnr

FILL_AT = THRESHOLD


def support(a: np.ndarray, low: float, high: float) -> np.ndarray:
    """Hysteresis: pixels with a >= low that are connected to a pixel with a >= high."""
    n, labels = cv2.connectedComponents((a >= low).astype(np.uint8), connectivity=8)
    strong = np.zeros(n, bool)
    strong[np.unique(labels[a >= high])] = True
    strong[0] = False
    return strong[labels]


def restore(
    rgb: np.ndarray, out: np.ndarray, keep: float, fill: str, high: float = 0.0
) -> np.ndarray:
    obs = rgb.astype(np.float32) / 255.0
    a = out[..., :1]
    if high > keep:
        a = np.where(support(a[..., 0], keep, high)[..., None], a, 0.0)
    ac = np.clip(a, 0.0, THRESHOLD)
    r = np.clip((obs - ac * out[..., 1:4]) / (1.0 - ac), 0.0, 1.0)
    opaque = a >= FILL_AT
    if fill == "learned":
        r = np.where(opaque, out[..., 4:7], r)
    r = np.where(a < keep, obs, r)
    img = np.clip(np.round(r * 255.0), 0, 255).astype(np.uint8)
    if fill == "telea" and opaque.any():
        img = cv2.inpaint(img, opaque[..., 0].astype(np.uint8) * 255, 3, cv2.INPAINT_TELEA)
    return img


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--data", type=Path, default=Path("/work/shared/data/sr-train"))
    ap.add_argument("--keep", type=str, default="0.02,0.05,0.1,0.2")
    ap.add_argument("--high", type=str, default="0", help="hysteresis upper thresholds")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--fill-at", type=float, default=THRESHOLD, help="fill where alpha >= this")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    global FILL_AT
    FILL_AT = args.fill_at
    ck = torch.load(args.checkpoint, map_location="cpu", weights_only=False)
    net = OverlayNet.from_config(ck["config"]).eval()
    net.load_state_dict(ck["model"])
    _, val_paths = split(args.data)
    pairs = validation_pairs(val_paths)
    outs = [predict(net, p.observed) for p in pairs]
    print(f"checkpoint step {ck['step']}, {len(pairs)} pairs")
    header = "setting".ljust(22) + "".join(k.rjust(11) for k in KINDS) + "  <input"
    print(header)
    row = "input".ljust(22)
    for k in KINDS:
        row += f"{np.mean([psnr(p.observed, p.clean) for p in pairs if p.kind == k]):11.2f}"
    print(row)
    settings = [
        (fill, float(k), float(hi))
        for fill in ("learned", "telea")
        for k in args.keep.split(",")
        for hi in args.high.split(",")
    ]
    for fill, keep, high in settings:
        if True:
            res = {k: [] for k in KINDS}
            below = 0
            for p, o in zip(pairs, outs, strict=True):
                v = psnr(restore(p.observed, o, keep, fill, high), p.clean)
                res[p.kind].append(min(v, 99.0))
                below += p.kind != "clean" and v < psnr(p.observed, p.clean)
            row = f"{fill} {keep:g}/{high:g}".ljust(22)
            row += "".join(f"{np.mean(res[k]):11.2f}" for k in KINDS)
            print(row + f"  {below}", flush=True)


if __name__ == "__main__":
    main()
