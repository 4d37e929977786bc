"""Train pixelmill-sr (residual luma CNN) for one scale, on the CPU or (``--device cuda``,
``--workers``) a GPU.

Reproducible from ``--seed`` (python, numpy and torch generators; the data split uses seed 0
independently). The learning rate follows a cosine from ``--lr`` to ``--lr / 100`` over
*progress* = max(step / steps, elapsed / time budget), so a run that hits its time budget still
ends annealed. Checkpoints (latest and best validation PSNR) are written at every evaluation.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import random
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch
from data import (
    EVAL_DEGRADATIONS,
    KERNELS,
    TRAIN_EVAL,
    PatchSampler,
    Source,
    load_sources,
    make_pair,
    parse_kernel_prob,
    split,
)
from model import MixSRNet, SRNet
from torch.nn import functional

# The image statistics a context network is conditioned on: the engine's own module, loaded by
# path (the training environment does not install pixelmill), so both compute the same numbers.
_CONTEXT_PY = Path(__file__).resolve().parents[2] / "src/pixelmill/engines/upscale/context.py"
_spec = importlib.util.spec_from_file_location("pixelmill_sr_context", _CONTEXT_PY)
assert _spec is not None
assert _spec.loader is not None
context = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(context)


# Floor of a patch's MSE under ``--loss logmse`` (1 level of 255 RMS): nearly flat patches,
# whose error is tiny, must not get an unbounded weight.
LOGMSE_EPS = (1.0 / 255.0) ** 2


def batch_stats(net: SRNet | MixSRNet, images: list[np.ndarray]) -> torch.Tensor | None:
    """The context statistics of each LR luma image in ``images``, or None for a plain net."""
    if not net.context:
        return None
    return torch.from_numpy(stats_of(images))


def stats_of(images: list[np.ndarray]) -> np.ndarray:
    """``(n, STATS)`` context statistics of LR luma images (the engine's own function)."""
    return np.stack([context.image_stats(y) for y in images])


def cpu_state(net: SRNet | MixSRNet) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu() for k, v in net.state_dict().items()}


def psnr(a: np.ndarray, b: np.ndarray, shave: int) -> float:
    a = a[shave:-shave, shave:-shave].astype(np.float64) * 255.0
    b = b[shave:-shave, shave:-shave].astype(np.float64) * 255.0
    mse = float(np.mean((a - b) ** 2))
    return 10.0 * math.log10(255.0**2 / mse)


def upscale_y(net: SRNet | MixSRNet, lr: np.ndarray) -> np.ndarray:
    m = net.margin
    stats = batch_stats(net, [lr])  # of the whole image, as the engine computes them
    x = np.pad(lr, m, mode="reflect")
    device = next(net.parameters()).device
    with torch.no_grad():
        y = net(
            torch.from_numpy(x)[None, None].to(device),
            None if stats is None else stats.to(device),
        )
    return np.clip(y[0, 0].cpu().numpy(), 0.0, 1.0)


def bicubic_y(lr: np.ndarray, scale: int) -> np.ndarray:
    from PIL import Image

    h, w = lr.shape
    im = Image.fromarray(lr, "F").resize((w * scale, h * scale), Image.Resampling.BICUBIC)
    return np.clip(np.asarray(im), 0.0, 1.0)


def evaluate(net: SRNet | MixSRNet, sets: dict[str, list], scale: int) -> dict[str, float]:
    """Mean PSNR-Y and gain over bicubic on the hold-out under each degradation in ``sets``;
    ``mean_gain`` is the mean over degradations, ``min_gain`` the worst degradation's mean."""
    net.eval()
    out: dict[str, float] = {}
    per: list[float] = []
    psnrs: list[float] = []
    for name, pairs in sets.items():
        gains = []
        for p in pairs:
            sr = upscale_y(net, p.lr)
            bi = bicubic_y(p.lr, scale)
            ps = psnr(sr, p.hr, scale)
            gains.append(ps - psnr(bi, p.hr, scale))
            psnrs.append(ps)
        out[f"gain {name}"] = round(float(np.mean(gains)), 3)
        if isinstance(net, MixSRNet):
            # How the router mixes the experts for this condition (mean over the photos).
            with torch.no_grad():
                stats = batch_stats(net, [p.lr for p in pairs])
                assert stats is not None
                device = next(net.parameters()).device
                alpha = net.routing(stats.to(device))[0].mean(dim=0).cpu()
            out[f"mix {name}"] = [round(float(a), 3) for a in alpha]  # type: ignore[assignment]
        per.append(float(np.mean(gains)))
    out["mean_psnr"] = float(np.mean(psnrs))
    out["mean_gain"] = float(np.mean(per))
    out["min_gain"] = float(np.min(per))
    net.train()
    return out


class Batches(torch.utils.data.IterableDataset[tuple[torch.Tensor, ...]]):
    """Endless training batches ``(xs, ys, stats)`` (``stats`` empty for a plain network). In
    this process (``--workers 0``) they come from ``sampler``, the run's own (seeded with
    ``--seed``: the draw of every CPU run before ``--workers``); in DataLoader worker K from a
    sampler seeded ``seed + 1000 * (K + 1)``, so the workers draw different patches, and the
    context statistics are measured there too."""

    def __init__(
        self, sampler: PatchSampler, sources: list[Source], args: argparse.Namespace, ctx: bool
    ) -> None:
        self.sampler, self.sources, self.args, self.ctx = sampler, sources, args, ctx

    def __iter__(self) -> Iterator[tuple[torch.Tensor, ...]]:
        info = torch.utils.data.get_worker_info()
        sampler = self.sampler
        if info is not None:
            torch.set_num_threads(1)
            a = self.args
            sampler = PatchSampler(
                self.sources,
                sampler.scale,
                sampler.patch,
                sampler.margin,
                seed=a.seed + 1000 * (info.id + 1),
                clean=a.clean,
                kernel_prob=a.kernel_prob,
                region=a.context_region,
            )
        while True:
            xs, ys, regions = sampler.batch(self.args.batch)
            stats = stats_of(regions) if self.ctx else np.zeros((len(xs), 0), np.float32)
            yield torch.from_numpy(xs), torch.from_numpy(ys), torch.from_numpy(stats)


def batches(
    sampler: PatchSampler, sources: list[Source], args: argparse.Namespace, ctx: bool
) -> Iterator[tuple[torch.Tensor, ...]]:
    """The training batches, drawn in this process or by ``--workers`` DataLoader processes."""
    data = Batches(sampler, sources, args, ctx)
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, default=Path("/work/shared/data/sr-train"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--scale", type=int, choices=[2, 4], required=True)
    ap.add_argument("--channels", type=int, default=16)
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--head-kernel", type=int, default=5)
    ap.add_argument("--patch", type=int, default=40, help="LR patch size (without the margin)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--minutes", type=float, default=30.0, help="time budget")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument(
        "--clean",
        type=float,
        default=0.0,
        help="extra share of patches with the plain PIL bicubic degradation (see data.py)",
    )
    ap.add_argument(
        "--kernel-prob",
        type=parse_kernel_prob,
        default=None,
        help="downscaling-kernel draw: 7 comma-separated weights in the order "
        + ",".join(KERNELS)
        + " (default data.KERNEL_PROB: 0.3 PIL bicubic, 0.7/6 each other)",
    )
    ap.add_argument(
        "--loss",
        choices=["l1", "l2", "logmse"],
        default="l1",
        help="training loss; l2 (mean squared error) is what PSNR measures, and under an"
        " ambiguous input (e.g. which pixel of each block a nearest-neighbour downscale kept)"
        " it learns the mean of the possible images where l1 learns a median; logmse is the"
        " mean over patches of log(patch MSE + eps), i.e. minus the mean patch PSNR: every"
        " patch counts in decibels, so easy (clean) patches weigh as much as hard ones",
    )
    ap.add_argument(
        "--context",
        action="store_true",
        help="condition every body layer on image-wide statistics (engines/upscale/context.py)",
    )
    ap.add_argument(
        "--context-region",
        type=int,
        default=0,
        help="measure a context network's statistics over a region of up to this many LR pixels"
        " a side around each patch (0: the patch itself)",
    )
    ap.add_argument(
        "--experts",
        type=int,
        default=1,
        help="with --context: every convolution a mix of this many kernels, blended per image"
        " by a router on the statistics (model.MixSRNet; folded per image at run time, so the"
        " deployed cost is one network's); the experts start as copies of the --init-onnx"
        " network",
    )
    ap.add_argument(
        "--spread",
        type=float,
        default=1.0,
        help="standard deviation of the router's initial logits over a sample of training"
        " patches (their mean is set to 0): how differently inputs are mixed at the start"
        " (equal mixes would give every expert the same gradient)",
    )
    ap.add_argument("--warmup", type=int, default=0, help="linear learning-rate warm-up steps")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--channels-last",
        action="store_true",
        help="keep the network's weights and activations channels-last (same arithmetic; about"
        " 2x faster per step for C16 on one thread of this CPU)",
    )
    ap.add_argument("--device", default="cpu", help="torch device for the network (cpu, cuda)")
    ap.add_argument(
        "--workers",
        type=int,
        default=0,
        help="DataLoader processes drawing the batches (0: this process, one after each step)",
    )
    ap.add_argument("--eval-every", type=int, default=500)
    ap.add_argument(
        "--eval-conditions",
        type=int,
        default=len(TRAIN_EVAL),
        help="how many of data.TRAIN_EVAL's degradations to log (evaluation is slow on a CPU)",
    )
    ap.add_argument("--init", type=Path, default=None, help="checkpoint to copy head/body from")
    ap.add_argument(
        "--init-full",
        type=Path,
        default=None,
        help="continue from a checkpoint of the same configuration: every weight, context head"
        " included",
    )
    ap.add_argument(
        "--init-onnx",
        type=Path,
        default=None,
        help="continue from an exported model: every weight from this ONNX file",
    )
    ap.add_argument(
        "--rep",
        action="store_true",
        help="train the body as re-parameterisable multi-branch blocks (folded at export)",
    )
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)

    t0 = time.time()
    train_files, val_files = split(args.data, seed=0)
    sources = load_sources(train_files, args.scale)
    val_sets = {
        name: [make_pair(f, args.scale, EVAL_DEGRADATIONS[name]) for f in val_files]
        for name in TRAIN_EVAL[: args.eval_conditions]
    }
    n_tr, n_va = len(sources), len(val_files)
    print(f"loaded {n_tr} train / {n_va} val images in {time.time() - t0:.1f}s", flush=True)

    net = SRNet(
        args.scale,
        args.channels,
        args.depth,
        args.head_kernel,
        rep=args.rep,
        context=context.STATS if args.context else 0,
    )
    # A mixture exported by export.py (its whole-network file) continues as it is: experts
    # and router; a plain network is copied into every expert.
    init_mixture: dict[str, torch.Tensor] | None = None
    if args.init_onnx is not None:
        import onnx
        from onnx import numpy_helper

        model = onnx.load(str(args.init_onnx))
        state = {
            i.name: torch.from_numpy(numpy_helper.to_array(i).copy())
            for i in model.graph.initializer
        }
        meta = {p.key: p.value for p in model.metadata_props}
        experts = json.loads(meta.get("pixelmill_config", "{}")).get("experts", 1)
        if experts > 1:
            assert experts == args.experts, f"{args.init_onnx} holds {experts} experts"
            init_mixture = state
        else:
            net.load_plain(state)
        print(f"continuing from {args.init_onnx}", flush=True)
    if args.experts > 1:
        assert args.context, "--experts needs --context (the router reads the statistics)"
        net = MixSRNet.from_plain(net, args.experts)  # type: ignore[assignment]
        if init_mixture is not None:
            src = json.loads(meta["pixelmill_config"])
            if (src["channels"], src["depth"]) == (args.channels, args.depth):
                net.load_state_dict(init_mixture)
                print("the experts and the router as exported", flush=True)
            else:
                net.load_narrower(init_mixture, src["channels"], src["depth"])
                print(
                    f"the experts and the router as exported, grown from {src['channels']} "
                    f"channels x {src['depth']} layers",
                    flush=True,
                )
        else:
            print(f"{args.experts} experts, each a copy of the network so far", flush=True)
    if args.init_full is not None:
        ck = torch.load(args.init_full, map_location="cpu", weights_only=False)
        net.load_state_dict(ck["model"])
        print(f"continuing from {args.init_full} (step {ck.get('step')})", flush=True)
    if args.init is not None:
        ck = torch.load(args.init, map_location="cpu", weights_only=False)
        state = {k: v for k, v in ck["model"].items() if k.startswith(("head.", "body."))}
        missing = net.load_state_dict(state, strict=False)
        print(f"init head/body from {args.init} (missing: {missing.missing_keys})", flush=True)
    print(
        json.dumps(
            {
                **net.config(),
                "params": net.param_count(),
                "macs_per_input_pixel": net.macs_per_input_pixel(),
                "kernel_prob": None
                if args.kernel_prob is None
                else [round(float(v), 4) for v in args.kernel_prob],
            }
        ),
        flush=True,
    )

    if args.channels_last and args.experts == 1:
        net = net.to(memory_format=torch.channels_last)
    sampler = PatchSampler(
        sources,
        args.scale,
        args.patch,
        net.margin,
        seed=args.seed,
        clean=args.clean,
        kernel_prob=args.kernel_prob,
        region=args.context_region,
    )
    if isinstance(net, MixSRNet) and args.init_full is None and init_mixture is None:
        _, _, sample = sampler.batch(256)
        stats = batch_stats(net, sample)
        assert stats is not None
        net.centre_router(stats, args.spread)
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True  # fixed patch sizes
    net = net.to(device)
    data = batches(sampler, sources, args, bool(net.context))
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    budget = args.minutes * 60.0
    start = time.time()
    best = -1.0
    log: list[dict[str, float]] = []
    # summed on the device: reading the loss every step would wait for the GPU each step
    loss_acc = torch.zeros((), device=device)
    step = 0
    while True:
        elapsed = time.time() - start
        progress = max(step / args.steps, elapsed / budget)
        if progress >= 1.0:
            break
        lr = args.lr * (0.01 + 0.99 * 0.5 * (1 + math.cos(math.pi * progress)))
        if step < args.warmup:
            # Linear warm-up: a restarted Adam takes full-size steps at once, which knocks a
            # network continued from an export off what it had learned before it adapts.
            lr *= (step + 1) / args.warmup
        for g in opt.param_groups:
            g["lr"] = lr
        xs, target, stats = (t.to(device, non_blocking=True) for t in next(data))
        pred = net(xs, stats if net.context else None)
        if args.loss == "l2":
            loss = functional.mse_loss(pred, target)
        elif args.loss == "logmse":
            per_patch = ((pred - target) ** 2).mean(dim=(1, 2, 3))
            loss = torch.log(per_patch + LOGMSE_EPS).mean()
        else:
            loss = functional.l1_loss(pred, target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss_acc += loss.detach()
        step += 1
        if step % args.eval_every == 0:
            ev = evaluate(net, val_sets, args.scale)
            rec = {
                "step": step,
                "minutes": round((time.time() - start) / 60, 2),
                "lr": lr,
                "loss": float(loss_acc) / args.eval_every,
                **ev,
            }
            log.append(rec)
            loss_acc.zero_()
            print(
                f"step {step} {rec['minutes']}min lr {lr:.2e} loss {rec['loss']:.5f} "
                f"val {ev['mean_psnr']:.3f} dB gain mean {ev['mean_gain']:+.3f} "
                f"min {ev['min_gain']:+.3f} | "
                + " ".join(f"{v:+.2f}" for k, v in ev.items() if k.startswith("gain "))
                + "".join(f" {v}" for k, v in ev.items() if k.startswith("mix ")),
                flush=True,
            )
            ck = {
                "model": cpu_state(net),
                "config": net.config(),
                "rep": args.rep,
                "step": step,
                "args": {k: str(v) for k, v in vars(args).items()},
                "val": ev,
            }
            torch.save(ck, args.out / "latest.pt")
            if ev["mean_gain"] > best:
                best = ev["mean_gain"]
                torch.save(ck, args.out / "best.pt")
            (args.out / "log.json").write_text(json.dumps(log, indent=1))
    ev = evaluate(net, val_sets, args.scale)
    ck = {
        "model": cpu_state(net),
        "config": net.config(),
        "rep": args.rep,
        "step": step,
        "args": {k: str(v) for k, v in vars(args).items()},
        "val": ev,
    }
    torch.save(ck, args.out / "final.pt")
    log.append({"step": step, "minutes": round((time.time() - start) / 60, 2), **ev})
    (args.out / "log.json").write_text(json.dumps(log, indent=1))
    print(
        f"done: {step} steps in {(time.time() - start) / 60:.1f} min; final val gain "
        f"{ev['mean_gain']:+.3f} dB ({ev['mean_psnr']:.3f} dB)",
        flush=True,
    )


if __name__ == "__main__":
    main()
