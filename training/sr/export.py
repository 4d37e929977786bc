"""Export a trained SRNet checkpoint to ONNX (opset 17, dynamic height/width)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import onnx
import torch
from fold import CONTEXT_SUFFIX, PLAIN_SUFFIX, copy_meta, externalise
from model import MixSRNet, SRNet
from torch import nn


def export(net: SRNet | MixSRNet, path: Path, meta: dict[str, str] | None = None) -> None:
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


class _Blend(nn.Module):
    """``stats -> every weight of the plain network`` for one image (``MixSRNet.weights_for``)."""

    def __init__(self, net: MixSRNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, stats: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(self.net.weights_for(stats).values())


def export_mix(net: MixSRNet, path: Path, meta: dict[str, str]) -> list[Path]:
    """A mixture network as the engine runs it: ``path`` (the whole network, ``y_lr`` and
    ``stats`` in), and beside it the two graphs ``fold.py`` makes for a gains-only context
    network: ``<stem>-context.onnx`` (``stats`` -> the blended, gain-folded weights of every
    layer) and ``<stem>-plain.onnx`` (a plain :class:`SRNet` whose weights are all external
    initialisers). The engine's ``FoldedNetwork`` runs both without knowing the difference."""
    net = net.eval()
    export(net, path, meta)
    source = onnx.load(str(path))
    stats = torch.zeros(1, net.context)
    weights = {k: v.detach().clone() for k, v in net.weights_for(stats).items()}
    names = list(weights)
    context_path = path.with_name(path.stem + CONTEXT_SUFFIX + path.suffix)
    torch.onnx.export(
        _Blend(net),
        (stats,),
        str(context_path),
        input_names=["stats"],
        output_names=names,
        opset_version=17,
        dynamo=False,
    )
    context = onnx.load(str(context_path))
    copy_meta(source, context, "context")
    onnx.checker.check_model(context)
    onnx.save(context, str(context_path))

    plain = SRNet(net.scale, net.channels, net.depth, net.head_kernel, context=0)
    with torch.no_grad():
        plain.load_state_dict(weights)
    plain_path = path.with_name(path.stem + PLAIN_SUFFIX + path.suffix)
    export(plain, plain_path)
    model = onnx.load(str(plain_path))
    del model.metadata_props[:]
    copy_meta(source, model, "plain")
    externalise(model, lambda name: name in names)
    onnx.save(model, str(plain_path))
    return [path, context_path, plain_path]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("output", type=Path)
    ap.add_argument("--name", default=None, help="pixelmill_name (default pixelmill-sr-x<scale>)")
    args = ap.parse_args()
    ck = torch.load(args.checkpoint, map_location="cpu", weights_only=False)
    cfg = ck["config"]
    net: SRNet | MixSRNet
    if cfg.get("experts", 1) > 1:
        c = cfg
        net = MixSRNet(
            c["scale"], c["channels"], c["depth"], c["head_kernel"], c["context"], c["experts"]
        )
        net.load_state_dict(ck["model"])
    else:
        plain = SRNet(
            cfg["scale"],
            cfg["channels"],
            cfg["depth"],
            cfg["head_kernel"],
            ck.get("rep", False),
            context=cfg.get("context", 0),
        )
        plain.load_state_dict(ck["model"])
        net = plain.plain()
    meta = {
        "pixelmill_name": args.name or f"pixelmill-sr-x{cfg['scale']}",
        "pixelmill_step": str(ck.get("step", "")),
        "pixelmill_params": str(net.param_count()),
        "pixelmill_macs_per_input_pixel": str(net.macs_per_input_pixel()),
    }
    if isinstance(net, MixSRNet):
        written = export_mix(net, args.output, meta)
    else:
        export(net, args.output, meta)
        written = [args.output]
    for path in written:
        print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
