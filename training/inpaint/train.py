"""Train pixelmill-inpaint (``gated.InpaintNet``) on the CPU.

Loss: L1 between the output and the clean photo over the masked pixels (outside the mask the
output is the input). Adam; the learning rate warms up over ``--warmup`` steps and then follows
a cosine to lr / 100 over max(step / steps, elapsed / minutes). Validation every
``--eval-every`` steps on the held-out photos (``masks.validation``): whole-image and in-mask
PSNR of Telea's first fill and of the network, and how many samples the network made worse
than Telea. Checkpoints ``latest.pt`` (every evaluation) and ``final.pt``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

import numpy as np
import torch
from gated import MULTIPLE, InpaintNet, parameters
from masks import Sampler, ValSample, overlay, validation


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return 10.0 * math.log10(255.0**2 / max(mse, 1e-6))


def run(net: InpaintNet, first: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The network on a whole uint8 image (reflect-padded to a multiple of ``MULTIPLE``)."""
    h, w = mask.shape
    ph, pw = (-h) % MULTIPLE, (-w) % MULTIPLE
    f = np.pad(first, ((0, ph), (0, pw), (0, 0)), mode="reflect").astype(np.float32) / 255.0
    m = np.pad(mask, ((0, ph), (0, pw)), mode="reflect").astype(np.float32)
    x = np.concatenate([f.transpose(2, 0, 1), m[None]], axis=0)[None]
    with torch.no_grad():
        y = net(torch.from_numpy(np.ascontiguousarray(x)))[0, :, :h, :w].numpy()
    return np.clip(np.rint(y.transpose(1, 2, 0) * 255.0), 0, 255).astype(np.uint8)


def evaluate(net: InpaintNet, val: list[ValSample]) -> dict[str, float]:
    net.eval()
    whole_t, whole_n, in_t, in_n, worse = [], [], [], [], 0
    for s in val:
        out = run(net, s.first, s.mask)
        whole_t.append(psnr(s.first, s.clean))
        whole_n.append(psnr(out, s.clean))
        in_t.append(psnr(s.first[s.mask], s.clean[s.mask]))
        in_n.append(psnr(out[s.mask], s.clean[s.mask]))
        worse += int(whole_n[-1] < whole_t[-1] - 0.005)
    net.train()
    return {
        "whole_telea": float(np.mean(whole_t)),
        "whole_net": float(np.mean(whole_n)),
        "mask_telea": float(np.mean(in_t)),
        "mask_net": float(np.mean(in_n)),
        "worse": float(worse),
        "n": float(len(val)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, default=Path("/work/shared/data/sr-train"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--patch", type=int, default=96)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--eval-every", type=int, default=500)
    ap.add_argument("--init", type=Path, help="a checkpoint to start from")
    args = ap.parse_args()

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    train_paths, val_paths = overlay.split(args.data)
    images = [overlay.load_rgb(p) for p in train_paths]
    sampler = Sampler(images, args.patch, args.seed)
    val = validation(val_paths)
    net = InpaintNet()
    if args.init:
        net.load_state_dict(torch.load(args.init, map_location="cpu")["model"])
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    print(f"{parameters(net)} parameters, {len(images)} training photos, {len(val)} val samples")
    print(json.dumps({"step": 0, **evaluate(net, val)}), flush=True)
    t0 = time.monotonic()
    step, running = 0, 0.0
    while step < args.steps:
        progress = max(step / args.steps, (time.monotonic() - t0) / (60.0 * args.minutes))
        if progress >= 1.0:
            break
        lr = args.lr * (0.01 + 0.99 * 0.5 * (1.0 + math.cos(math.pi * progress)))
        lr *= min(1.0, (step + 1) / args.warmup)
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = sampler.batch(args.batch)
        xt, yt = torch.from_numpy(x), torch.from_numpy(y)
        m = xt[:, 3:4]
        out = net(xt)
        loss = (m * (out - yt).abs()).sum() / (3.0 * m.sum().clamp(min=1.0))
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        running += float(loss)
        if step % args.eval_every == 0:
            ckpt = {"model": net.state_dict(), "step": step, "args": vars(args)}
            torch.save(ckpt, args.out / "latest.pt")
            report = {
                "step": step,
                "minutes": round((time.monotonic() - t0) / 60, 1),
                "lr": lr,
                "loss": running / args.eval_every,
                **evaluate(net, val),
            }
            running = 0.0
            print(json.dumps(report), flush=True)
    torch.save({"model": net.state_dict(), "step": step, "args": vars(args)}, args.out / "final.pt")
    print(json.dumps({"step": step, "final": True, **evaluate(net, val)}), flush=True)


if __name__ == "__main__":
    main()
