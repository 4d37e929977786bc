"""Split an exported context network (``export.py`` with ``--context``) into the two graphs the
engine runs: a *plain* network and a *context* graph that folds the image's gains into it.

A context network multiplies the output of every body layer by a per-channel gain computed from
the image statistics: ``g * relu(W x + b)``. Gains are positive (``2 * sigmoid``), so this equals
``relu((g W) x + g b)``: the gains fold into the layer's weights. onnxruntime runs a convolution
stack much faster when its weights are constants (it pre-packs them into its blocked NCHWc
layout and fuses the ReLUs); the broadcast multiplications of the exported graph break that
chain into reorders (0.25 MP tile: 73 ms against 50 ms for the same network without them).

- ``<stem>-plain.onnx``: ``y_lr -> y_hr`` without the ``stats`` input and the multiplications;
  the body layers' weights and biases are external initialisers it does not carry.
- ``<stem>-context.onnx``: ``stats -> body.<k>.weight, body.<k>.bias`` for every body layer,
  the folded weights and biases for that image.

The engine runs the context graph once per image and creates a session of the plain graph with
those outputs as its external initialisers (``SessionOptions.add_external_initializers``, about
3 ms), so the convolutions see constants. Both files keep the source's metadata; the result
equals the source network's output to float rounding (the engine's tests compare them on real
images).

Usage (the training environment, which has ``onnx``)::

    python fold.py ../../src/pixelmill/engines/upscale/models/pixelmill-sr-x2.onnx
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.external_data_helper import set_external_data

PLAIN_SUFFIX = "-plain"
CONTEXT_SUFFIX = "-context"


def _initialisers(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}


def copy_meta(source: onnx.ModelProto, target: onnx.ModelProto, role: str) -> None:
    for prop in source.metadata_props:
        entry = target.metadata_props.add()
        entry.key, entry.value = prop.key, prop.value
    entry = target.metadata_props.add()
    entry.key, entry.value = "pixelmill_fold_role", role


def plain_graph(model: onnx.ModelProto) -> onnx.ModelProto:
    """The source graph without its context: every ``Mul`` that applies a gain is removed (its
    consumers read the ReLU before it), then everything that no longer reaches ``y_hr``."""
    source = model
    model = onnx.ModelProto()
    model.CopyFrom(source)
    graph = model.graph
    nodes = list(graph.node)
    gain_muls = {
        n.output[0]: n.input[0]
        for n in nodes
        if n.op_type == "Mul" and any(i.startswith("/Unsqueeze") for i in n.input[1:])
    }
    rewired = []
    for n in nodes:
        if n.output[0] in gain_muls:
            continue
        inputs = [gain_muls.get(i, i) for i in n.input]
        del n.input[:]
        n.input.extend(inputs)
        rewired.append(n)
    # Keep only what ``y_hr`` needs (walk back from the output).
    producers = {o: n for n in rewired for o in n.output}
    needed: set[str] = set()
    stack = [o.name for o in graph.output]
    kept_ids: set[int] = set()
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        node = producers.get(name)
        if node is not None and id(node) not in kept_ids:
            kept_ids.add(id(node))
            stack.extend(node.input)
    kept = [n for n in rewired if id(n) in kept_ids]
    inits = [i for i in graph.initializer if i.name in needed]
    inputs = [i for i in graph.input if i.name in needed]
    new_graph = helper.make_graph(kept, graph.name, inputs, list(graph.output), inits)
    out = helper.make_model(new_graph, opset_imports=list(model.opset_import))
    out.ir_version = model.ir_version
    copy_meta(model, out, "plain")
    onnx.checker.check_model(out)
    # The body's weights and biases become *external* initialisers that the file does not
    # carry: the engine hands them over per image (``add_external_initializers``), and
    # onnxruntime reads external initialisers before it optimises the graph, so its NCHWc
    # layout pass packs the folded values. (``add_initializer`` overrides come too late for
    # that pass: the packed weights would be the file's, the result wrong.)
    externalise(out, lambda name: name.startswith("body."))
    return out


def externalise(model: onnx.ModelProto, which: Callable[[str], bool]) -> None:
    """Make the initialisers ``which`` accepts *external* ones the file does not carry (their
    values come per image from the context graph, see ``plain_graph``)."""
    for init in model.graph.initializer:
        if which(init.name):
            set_external_data(init, location=init.name)
            init.ClearField("raw_data")


def context_graph(model: onnx.ModelProto) -> onnx.ModelProto:
    """``stats (1, STATS) -> body.<k>.weight (C, C, 3, 3), body.<k>.bias (C,)``: the context
    MLP's gains ``2 * sigmoid(ctx.2(relu(ctx.0(stats))))`` folded into each body layer."""
    cfg = json.loads(next(p.value for p in model.metadata_props if p.key == "pixelmill_config"))
    depth, channels = int(cfg["depth"]), int(cfg["channels"])
    w = _initialisers(model)
    stats_input = next(i for i in model.graph.input if i.name == "stats")
    inits = [
        numpy_helper.from_array(w[name], name)
        for name in ("ctx.0.weight", "ctx.0.bias", "ctx.2.weight", "ctx.2.bias")
    ]
    inits.append(numpy_helper.from_array(np.array([depth, channels], np.int64), "gain_shape"))
    inits.append(numpy_helper.from_array(np.array(2.0, np.float32), "two"))
    inits.append(numpy_helper.from_array(np.array([channels, 1, 1, 1], np.int64), "col_shape"))
    nodes = [
        helper.make_node("Gemm", ["stats", "ctx.0.weight", "ctx.0.bias"], ["h0"], transB=1),
        helper.make_node("Relu", ["h0"], ["h1"]),
        helper.make_node("Gemm", ["h1", "ctx.2.weight", "ctx.2.bias"], ["h2"], transB=1),
        helper.make_node("Sigmoid", ["h2"], ["h3"]),
        helper.make_node("Mul", ["h3", "two"], ["h4"]),
        helper.make_node("Reshape", ["h4", "gain_shape"], ["gains"]),
    ]
    outputs = []
    for k in range(depth):
        wk, bk = f"body.{k}.weight", f"body.{k}.bias"
        inits.append(numpy_helper.from_array(w[wk], f"src.{wk}"))
        inits.append(numpy_helper.from_array(w[bk], f"src.{bk}"))
        inits.append(numpy_helper.from_array(np.array([k], np.int64), f"index.{k}"))
        nodes += [
            helper.make_node("Gather", ["gains", f"index.{k}"], [f"g{k}_row"], axis=0),
            helper.make_node("Reshape", [f"g{k}_row", "col_shape"], [f"g{k}_col"]),
            helper.make_node("Mul", [f"src.{wk}", f"g{k}_col"], [wk]),
            helper.make_node("Reshape", [f"g{k}_row", "gain_shape_1d"], [f"g{k}"]),
            helper.make_node("Mul", [f"src.{bk}", f"g{k}"], [bk]),
        ]
        outputs += [
            helper.make_tensor_value_info(wk, onnx.TensorProto.FLOAT, list(w[wk].shape)),
            helper.make_tensor_value_info(bk, onnx.TensorProto.FLOAT, list(w[bk].shape)),
        ]
    inits.append(numpy_helper.from_array(np.array([channels], np.int64), "gain_shape_1d"))
    graph = helper.make_graph(nodes, "pixelmill-sr-context", [stats_input], outputs, inits)
    out = helper.make_model(graph, opset_imports=list(model.opset_import))
    out.ir_version = model.ir_version
    copy_meta(model, out, "context")
    onnx.checker.check_model(out)
    return out


def fold(path: Path, out_dir: Path | None = None) -> tuple[Path, Path]:
    model = onnx.load(str(path))
    if not any(i.name == "stats" for i in model.graph.input):
        raise SystemExit(f"{path} has no 'stats' input: not a context network")
    out_dir = out_dir or path.parent
    plain_path = out_dir / (path.stem + PLAIN_SUFFIX + path.suffix)
    context_path = out_dir / (path.stem + CONTEXT_SUFFIX + path.suffix)
    onnx.save(plain_graph(model), str(plain_path))
    onnx.save(context_graph(model), str(context_path))
    return plain_path, context_path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", type=Path, nargs="+", help="exported context networks")
    ap.add_argument("--out-dir", type=Path, default=None, help="default: beside each model")
    args = ap.parse_args()
    for path in args.models:
        for written in fold(path, args.out_dir):
            print(f"wrote {written} ({written.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
