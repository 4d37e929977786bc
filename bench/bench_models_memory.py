"""Peak memory of a catalogued-model family on a 4k input, tiled (issue 59, docs/models.md).

No real weights reach this machine, so the model is a stand-in of Real-ESRGAN's signature
(``input`` 1×3×H×W RGB 0..1 -> 1×3×2H×2W) with random weights and a real network's shape: a
3×3 convolution to ``--channels`` features, ``--layers`` more 3×3 convolutions with ReLU, a ×2
nearest-neighbour upsampling and a 3×3 convolution back to RGB. It runs through the same
:class:`~pixelmill.engines.runtime.families.upscaler.Upscaler` (256-pixel windows, 16 pixels of
context) the upscale engine uses, in a fresh process, and prints the process's peak RSS
(``ru_maxrss``) after loading and after the run, and the time. ``--untiled`` runs the whole
image in one window instead, for comparison (use a smaller ``--width``/``--height``: memory grows
with the pixels).

    nice -n 15 .venv/bin/python bench/bench_models_memory.py [--width 3840 --height 2160]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save


def build(path: Path, channels: int, layers: int) -> Path:
    rng = np.random.default_rng(0)
    inits, nodes = [], []

    def conv(name: str, src: str, cin: int, cout: int, relu: bool) -> str:
        w = (rng.standard_normal((cout, cin, 3, 3)) * (1.0 / (3 * np.sqrt(cin)))).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"{name}.w"))
        inits.append(numpy_helper.from_array(np.zeros(cout, np.float32), f"{name}.b"))
        out = f"{name}.y"
        nodes.append(helper.make_node("Conv", [src, f"{name}.w", f"{name}.b"], [out], pads=[1] * 4))
        if relu:
            nodes.append(helper.make_node("Relu", [out], [f"{name}.r"]))
            return f"{name}.r"
        return out

    x = conv("c0", "input", 3, channels, True)
    for i in range(layers):
        x = conv(f"c{i + 1}", x, channels, channels, True)
    inits.append(numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"))
    nodes.append(
        helper.make_node(
            "Resize",
            [x, "", "scales"],
            ["up"],
            mode="nearest",
            nearest_mode="floor",
            coordinate_transformation_mode="asymmetric",
        )
    )
    y = conv("out", "up", channels, 3, False)
    nodes.append(helper.make_node("Identity", [y], ["output"]))
    graph = helper.make_graph(
        nodes,
        "stand-in",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, "h", "w"])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 3, "h2", "w2"])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    save(model, str(path))
    return path


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--width", type=int, default=3840)
    parser.add_argument("--height", type=int, default=2160)
    parser.add_argument("--channels", type=int, default=32)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--untiled", action="store_true")
    args = parser.parse_args()

    from pixelmill.engines.runtime.families.upscaler import Upscaler

    with tempfile.TemporaryDirectory() as tmp:
        path = build(Path(tmp) / "real_esrgan_x2.onnx", args.channels, args.layers)
        size_mb = path.stat().st_size / 1e6
        upscaler = Upscaler(path, "stand-in")
        upscaler.load()
        if args.untiled:
            upscaler.window = max(args.width, args.height) + 32
        image = np.random.default_rng(1).integers(0, 256, (args.height, args.width, 3), np.uint8)
        loaded = peak_mb()
        start = time.perf_counter()
        out = upscaler.upscale(image)
        seconds = time.perf_counter() - start
    print(
        f"input {args.width}x{args.height}, output {out.shape[1]}x{out.shape[0]} "
        f"({out.nbytes / 1e6:.0f} MB), model {size_mb:.2f} MB ({args.channels} channels, "
        f"{args.layers + 2} convolutions), {'untiled' if args.untiled else 'tiled 256/16'}: "
        f"peak RSS {loaded:.0f} MB after loading, {peak_mb():.0f} MB after the run; "
        f"{seconds:.1f} s"
    )


if __name__ == "__main__":
    main()
