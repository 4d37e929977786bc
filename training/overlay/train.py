"""Train pixelmill-overlay (alpha / colour / fill U-Net) on synthetic overlays, on the CPU.

Loss: L1 between the reconstruction and the clean photo, where the reconstruction is the
unmixed pixel ``(obs - a * colour) / (1 - a)`` (predicted a clamped below the threshold) where
the true alpha is below ``THRESHOLD`` and the fill head where it is at or above it; plus
``--w-alpha`` x binary cross-entropy on the alpha logits (soft targets) and ``--w-colour`` x
alpha-weighted L1 on the colour. The reconstruction and alpha terms are *balanced*: half the
mean over overlay pixels (true alpha > 0.01), half over the rest) with ``--balanced``;
otherwise the reconstruction term is the plain mean (what whole-image PSNR measures) and the
cross-entropy weighs overlay pixels ``1 + --pos-weight``. The learning
rate follows a cosine to lr / 100 over max(step / steps, elapsed / minutes). Validation:
whole-image PSNR per kind on the held-out pairs (``data.validation_pairs``) every
``--eval-every`` steps; checkpoints ``latest.pt`` / ``best.pt`` / ``final.pt``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

# the engine's coverage -> opacity/colour fit and unmixing (numpy + OpenCV, no pixelmill deps)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src/pixelmill/engines/text_removal"))
import unmix as overlay_unmix
from data import (
    FONT_POOLS,
    KINDS,
    PatchSampler,
    PhotoAug,
    ValPair,
    load_rgb,
    split,
    use_fonts,
    validation_pairs,
)
from model import THRESHOLD, OverlayNet, unmix
from torch.nn import functional

KEEP_BELOW = 0.02
"""Predicted alpha below which the observed pixel is kept as it is."""


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return 10.0 * math.log10(255.0**2 / max(mse, 1e-6))


def predict(net: OverlayNet, rgb: np.ndarray) -> np.ndarray:
    h, w = rgb.shape[:2]
    ph, pw = (-h) % 8, (-w) % 8
    x = np.pad(rgb, ((0, ph), (0, pw), (0, 0)), mode="reflect").astype(np.float32) / 255.0
    device = next(net.parameters()).device
    with torch.no_grad():
        y = net(torch.from_numpy(x.transpose(2, 0, 1))[None].to(device)).cpu()
    return y[0, :, :h, :w].numpy().transpose(1, 2, 0)


def restore(rgb: np.ndarray, out: np.ndarray) -> np.ndarray:
    obs = rgb.astype(np.float32) / 255.0
    a = out[..., :1]
    col, fill = out[..., 1:4], out[..., 4:7]
    ac = np.clip(a, 0.0, THRESHOLD)
    u = np.clip((obs - ac * col) / (1.0 - ac), 0.0, 1.0)
    r = np.where(a >= THRESHOLD, fill, u)
    r = np.where(a < KEEP_BELOW, obs, r)
    return np.clip(np.round(r * 255.0), 0, 255).astype(np.uint8)


def evaluate(net: OverlayNet, pairs: list[ValPair]) -> dict[str, float]:
    net.eval()
    res: dict[str, list[float]] = {k: [] for k in KINDS}
    inp: dict[str, list[float]] = {k: [] for k in KINDS}
    cov: dict[str, list[float]] = {k: [] for k in KINDS}
    iou: dict[str, list[float]] = {k: [] for k in KINDS}
    for p in pairs:
        pred = predict(net, p.observed)
        out = restore(p.observed, pred)
        res[p.kind].append(psnr(out, p.clean))
        inp[p.kind].append(psnr(p.observed, p.clean) if p.kind != "clean" else 99.0)
        if pred.shape[2] > 7:
            fixed = overlay_unmix.restore(p.observed, pred[..., 7]).image
            cov[p.kind].append(min(psnr(fixed, p.clean), 99.0))
            t, q = p.cover >= 0.5, pred[..., 7] >= 0.5
            iou[p.kind].append(
                float((t & q).sum() / max(1, (t | q).sum())) if t.any() else 1.0 - float(q.mean())
            )
    net.train()
    summary: dict[str, float] = {}
    for k in KINDS:
        summary[f"{k}"] = round(float(np.mean(res[k])), 3)
        summary[f"{k}_in"] = round(float(np.mean(inp[k])), 3)
        if cov[k]:
            summary[f"{k}_fit"] = round(float(np.mean(cov[k])), 3)
            summary[f"{k}_iou"] = round(float(np.mean(iou[k])), 3)
    capped = [min(v, 60.0) for k in KINDS for v in res[k]]
    summary["overall"] = round(float(np.mean(capped)), 3)  # clean-image PSNR capped at 60 dB
    overlays = [v for k in KINDS if k != "clean" for v in res[k]]
    summary["score"] = round(float(np.mean(overlays)) - max(0.0, 45.0 - summary["clean"]), 3)
    if cov["caption"]:
        fits = [v for k in KINDS if k != "clean" for v in cov[k]]
        summary["score"] = round(float(np.mean(fits)) - max(0.0, 45.0 - summary["clean_fit"]), 3)
    return summary


def load_onnx_weights(net: OverlayNet, path: Path, member: int | None = None) -> None:
    """Start from an exported model's weights (initializer names are the state-dict keys). A
    7-channel head grown to 8: the coverage channel starts as a copy of the alpha channel.
    ``member``: take member K of an ``ensemble.py`` export (its keys are ``nets.K.<key>``)."""
    import onnx
    from onnx import numpy_helper

    init = {i.name: numpy_helper.to_array(i) for i in onnx.load(str(path)).graph.initializer}
    state = net.state_dict()
    for name, value in state.items():
        key = name if member is None else f"nets.{member}.{name}"
        src = torch.from_numpy(init[key].copy())
        if src.shape != value.shape and name.startswith("head."):
            grown = value.clone()
            grown[: src.shape[0]] = src
            grown[src.shape[0] :] = src[:1]
            src = grown
        state[name] = src
    net.load_state_dict(state)


class Batches(torch.utils.data.IterableDataset[tuple[torch.Tensor, ...]]):
    """Endless training batches (``PatchSampler.batch``). In-process (``--workers 0``) the
    sampler is seeded with the run's seed, the draw every CPU run before ``--workers`` made; in
    DataLoader worker K with ``seed + 1000 * (K + 1)``, so the workers draw different patches."""

    def __init__(self, images: list[np.ndarray], args: argparse.Namespace) -> None:
        self.images = images
        self.patch, self.seed, self.batch = args.patch, args.seed, args.batch
        self.weights = tuple(float(v) for v in args.kind_weights.split(","))
        dense, grey, contrast = (float(v) for v in args.aug.split(","))
        self.aug = PhotoAug(dense, grey, contrast)
        self.fonts = args.fonts

    def __iter__(self) -> Iterator[tuple[torch.Tensor, ...]]:
        info = torch.utils.data.get_worker_info()
        seed = self.seed if info is None else self.seed + 1000 * (info.id + 1)
        if info is not None:
            torch.set_num_threads(1)
            use_fonts(self.fonts)
        sampler = PatchSampler(self.images, self.patch, seed, self.weights, self.aug)
        while True:
            yield tuple(torch.from_numpy(a) for a in sampler.batch(self.batch))


def batches(
    images: list[np.ndarray], args: argparse.Namespace
) -> Iterator[tuple[torch.Tensor, ...]]:
    """The training batches, drawn in this process or by ``--workers`` DataLoader processes."""
    data = Batches(images, args)
    if args.workers == 0:
        return iter(data)
    loader = torch.utils.data.DataLoader(
        data,
        batch_size=None,
        num_workers=args.workers,
        pin_memory=args.device != "cpu",
        prefetch_factor=4,
        persistent_workers=True,
    )
    return iter(loader)


def cpu_state(net: OverlayNet) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu() for k, v in net.state_dict().items()}


def balanced(x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """Half the mean of ``x`` over the overlay pixels plus half over the others."""
    n_pos = pos.sum()
    on = (x * pos).sum() / n_pos.clamp(min=1.0)
    off = (x * (1 - pos)).sum() / (pos.numel() - n_pos).clamp(min=1.0)
    return 0.5 * (on + off) if float(n_pos) > 0 else off


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, default=Path("/work/shared/data/sr-train"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--widths", type=str, default="16,32,48,64")
    ap.add_argument("--patch", type=int, default=128)
    ap.add_argument("--batch", type=int, default=12)
    ap.add_argument("--steps", type=int, default=100000)
    ap.add_argument("--minutes", type=float, default=55.0)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--w-alpha", type=float, default=0.5)
    ap.add_argument("--w-colour", type=float, default=0.2)
    ap.add_argument("--balanced", action="store_true", help="balance overlay vs other pixels")
    ap.add_argument("--pos-weight", type=float, default=4.0, help="extra BCE weight on overlay")
    ap.add_argument("--init", type=Path, default=None, help="checkpoint to start from")
    ap.add_argument("--init-onnx", type=Path, default=None, help="exported model to start from")
    ap.add_argument(
        "--init-member", type=int, default=None, help="with --init-onnx: member K of an ensemble"
    )
    ap.add_argument("--outputs", type=int, default=8, help="7: no coverage head; 8: coverage")
    ap.add_argument("--w-cover", type=float, default=1.0, help="BCE weight of the coverage")
    ap.add_argument("--keep-every", type=int, default=1000, help="also keep step-N checkpoints")
    ap.add_argument(
        "--kind-weights", type=str, default="0.35,0.3,0.2,0.15", help="caption,watermark,logo,clean"
    )
    ap.add_argument(
        "--aug",
        type=str,
        default="0,0,0",
        help="PhotoAug probabilities dense,grey,contrast (e.g. 0.25,0.2,0.2)",
    )
    ap.add_argument(
        "--fonts",
        choices=[p for p in FONT_POOLS if p != "held-out"],
        default="base",
        help="generator font pool (data.py; held-out is for evaluation only)",
    )
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--workers",
        type=int,
        default=0,
        help="DataLoader processes drawing the batches (0: this process, one after each step)",
    )
    ap.add_argument("--device", default="cpu", help="torch device for the network (cpu, cuda)")
    ap.add_argument("--eval-every", type=int, default=500)
    ap.add_argument("--val-images", type=int, default=6, help="held-out photos used while training")
    args = ap.parse_args()

    use_fonts(args.fonts)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)

    train_paths, val_paths = split(args.data)
    images = [load_rgb(p) for p in train_paths]
    data = batches(images, args)
    val = validation_pairs(
        val_paths[:: max(1, len(val_paths) // args.val_images)][: args.val_images]
    )
    widths = tuple(int(v) for v in args.widths.split(","))
    net = OverlayNet(widths, args.outputs)  # type: ignore[arg-type]
    if args.init_onnx is not None:
        load_onnx_weights(net, args.init_onnx, args.init_member)
    if args.init is not None:
        net.load_state_dict(torch.load(args.init, map_location="cpu", weights_only=False)["model"])
    print(f"params {net.param_count()} macs/pixel {net.macs_per_pixel():.0f}", flush=True)
    device = torch.device(args.device)
    net = net.to(device)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    start = time.time()
    best = -1.0
    log = []
    step = 0
    losses: list[float] = []
    while True:
        progress = max(step / args.steps, (time.time() - start) / (60 * args.minutes))
        if progress >= 1.0:
            break
        lr = args.lr * (0.01 + 0.99 * 0.5 * (1 + math.cos(math.pi * progress)))
        warm = min(1.0, (step + 1) / 200)
        for g in opt.param_groups:
            g["lr"] = lr * warm
        obs, clean, alpha, colour, cover = (t.to(device, non_blocking=True) for t in next(data))
        z = net.logits(obs)
        out = torch.sigmoid(z)
        a_p, c_p, f_p = out[:, :1], out[:, 1:4], out[:, 4:7]
        opaque = (alpha >= THRESHOLD).float()
        rec = opaque * f_p + (1 - opaque) * unmix(obs, a_p, c_p)
        # Overlay pixels are a few per cent of the image: weigh them and the rest equally.
        pos = (alpha > 0.01).float()
        bce = functional.binary_cross_entropy_with_logits(z[:, :1], alpha, reduction="none")
        err = (rec - clean).abs().mean(1, keepdim=True)
        if args.balanced:
            loss_rec = balanced(err, pos)
            loss_a = balanced(bce, pos)
        else:
            loss_rec = err.mean()
            loss_a = (bce * (1.0 + args.pos_weight * pos)).mean()
        loss_c = (alpha * (c_p - colour).abs()).sum() / (3 * alpha.sum() + 1.0)
        loss = loss_rec + args.w_alpha * loss_a + args.w_colour * loss_c
        if args.outputs > 7:
            bce_k = functional.binary_cross_entropy_with_logits(z[:, 7:8], cover, reduction="none")
            pos_k = (cover > 0.01).float()
            if args.balanced:
                loss_k = balanced(bce_k, pos_k)
            else:
                loss_k = (bce_k * (1.0 + args.pos_weight * pos_k)).mean()
            loss = loss + args.w_cover * loss_k
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        step += 1
        if step % args.eval_every == 0:
            ev = evaluate(net, val)
            entry = {
                "step": step,
                "minutes": round((time.time() - start) / 60, 2),
                "lr": lr,
                "loss": float(np.mean(losses)),
                **ev,
            }
            losses = []
            log.append(entry)
            print(json.dumps(entry), flush=True)
            ck = {"model": cpu_state(net), "config": net.config(), "step": step, "eval": ev}
            torch.save(ck, args.out / "latest.pt")
            if args.keep_every and step % args.keep_every == 0:
                torch.save(ck, args.out / f"step{step}.pt")
            if ev["score"] > best:
                best = ev["score"]
                torch.save(ck, args.out / "best.pt")
    ev = evaluate(net, val)
    ck = {"model": cpu_state(net), "config": net.config(), "step": step, "eval": ev}
    torch.save(ck, args.out / "final.pt")
    log.append({"step": step, "minutes": round((time.time() - start) / 60, 2), "final": True, **ev})
    (args.out / "log.json").write_text(json.dumps(log, indent=1))
    print(json.dumps(log[-1]), flush=True)


if __name__ == "__main__":
    main()
