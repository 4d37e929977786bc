"""Tiny ONNX models with each family's exact input and output signature, built with the
``onnx`` package's helper API, whose answers are known in advance: any normalisation,
channel-order, scaling or tiling mistake in the code that feeds and reads them shows as a pixel
difference."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import numpy as np
from onnx import GraphProto, TensorProto, helper, numpy_helper, save

OPSET = 17
REMBG_U2NETP = Path(str(files("rembg") / "u2netp.onnx"))
"""rembg's own u2netp.onnx, from its wheel: the catalogue's u2netp byte for byte."""


def _save(graph: GraphProto, path: Path) -> Path:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    save(model, str(path))
    return path


def _const(name: str, value: np.ndarray) -> TensorProto:
    return numpy_helper.from_array(np.asarray(value), name=name)


def nearest_upscaler(path: Path, scale: int = 2, side: int | None = None) -> Path:
    """Real-ESRGAN's signature (``input`` 1×3×H×W RGB 0..1 -> 1×3×sH×sW RGB 0..1) computing a
    nearest-neighbour resize; ``side``: a fixed input size instead of a dynamic one."""
    h: int | str = side if side is not None else "height"
    w: int | str = side if side is not None else "width"
    out_h: int | str = side * scale if side is not None else "out_height"
    out_w: int | str = side * scale if side is not None else "out_width"
    x = helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, h, w])
    y = helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 3, out_h, out_w])
    scales = _const("scales", np.array([1, 1, scale, scale], np.float32))
    resize = helper.make_node(
        "Resize",
        ["input", "", "scales"],
        ["output"],
        mode="nearest",
        nearest_mode="floor",
        coordinate_transformation_mode="asymmetric",
    )
    return _save(helper.make_graph([resize], "upscaler", [x], [y], [scales]), path)


def inpainter(path: Path, invert: bool = False) -> Path:
    """Carve's LaMa signature (``image`` 1×3×512×512 RGB 0..1, ``mask`` 1×1×512×512, 1 = hole ->
    ``output`` 1×3×512×512 RGB 0..255). Returns its image input (×255); ``invert``: inside the
    hole it returns the image's negative instead, so a wrong mask polarity shows too."""
    image = helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 512, 512])
    mask = helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, 512, 512])
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 3, 512, 512])
    k = _const("k", np.array(255.0, np.float32))
    nodes = []
    if invert:
        # image + mask * (1 - 2 * image)
        two = _const("two", np.array(2.0, np.float32))
        one = _const("one", np.array(1.0, np.float32))
        nodes += [
            helper.make_node("Mul", ["image", "two"], ["twice"]),
            helper.make_node("Sub", ["one", "twice"], ["flip"]),
            helper.make_node("Mul", ["mask", "flip"], ["change"]),
            helper.make_node("Add", ["image", "change"], ["filled"]),
            helper.make_node("Mul", ["filled", "k"], ["output"]),
        ]
        inits = [k, two, one]
    else:
        nodes += [
            helper.make_node("Mul", ["mask", "k"], ["unused"]),
            helper.make_node("Mul", ["image", "k"], ["output"]),
        ]
        inits = [k]
    return _save(helper.make_graph(nodes, "inpainter", [image, mask], [out], inits), path)


def colorizer(path: Path, a: float, b: float, side: int = 256) -> Path:
    """DDColor's signature (``input`` 1×3×S×S -> 1×2×S×S Lab a, b) answering a constant chroma
    ``(a, b)`` everywhere (0 × the input, plus the constant, so the input is consumed)."""
    x = helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, side, side])
    y = helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 2, side, side])
    zero = _const("zero", np.array(0.0, np.float32))
    ab = _const("ab", np.array([a, b], np.float32).reshape(1, 2, 1, 1))
    starts, ends, axes = (
        _const(n, np.array([v], np.int64)) for n, v in (("s", 0), ("e", 2), ("a", 1))
    )
    nodes = [
        helper.make_node("Slice", ["input", "s", "e", "a"], ["two"]),
        helper.make_node("Mul", ["two", "zero"], ["nothing"]),
        helper.make_node("Add", ["nothing", "ab"], ["output"]),
    ]
    return _save(
        helper.make_graph(nodes, "colorizer", [x], [y], [zero, ab, starts, ends, axes]), path
    )


def red_saliency(path: Path, side: int = 320) -> Path:
    """rembg's U²-Net signature (1×3×S×S normalised RGB -> first output 1×1×S×S) answering its
    first (red) input channel: the mask a cut-out sees is then the red channel, min-max
    normalised, so a wrong channel order or normalisation shows."""
    x = helper.make_tensor_value_info("input.1", TensorProto.FLOAT, [1, 3, side, side])
    y = helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, side, side])
    starts, ends, axes = (
        _const(n, np.array([v], np.int64)) for n, v in (("s", 0), ("e", 1), ("a", 1))
    )
    node = helper.make_node("Slice", ["input.1", "s", "e", "a"], ["mask"])
    return _save(helper.make_graph([node], "saliency", [x], [y], [starts, ends, axes]), path)


def face_restorer(
    path: Path, colour: tuple[float, float, float] | None = None, weight: bool = False
) -> Path:
    """FaceFusion's GFPGAN signature (``input`` 1×3×512×512 RGB -1..1 -> the same shape and
    range) returning its input, or with ``colour`` a constant RGB (-1..1); ``weight``: also
    CodeFormer's ``weight`` input (a double, consumed and ignored)."""
    x = helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 512, 512])
    y = helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 3, 512, 512])
    inputs = [x]
    inits: list[TensorProto] = []
    nodes = []
    source = "input"
    if weight:
        inputs.append(helper.make_tensor_value_info("weight", TensorProto.DOUBLE, [1]))
        inits.append(_const("nil", np.array([0.0], np.float32)))
        nodes += [
            helper.make_node("Cast", ["weight"], ["weight_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["weight_f", "nil"], ["weight_0"]),
            helper.make_node("Add", ["input", "weight_0"], ["with_weight"]),
        ]
        source = "with_weight"
    if colour is None:
        nodes.append(helper.make_node("Identity", [source], ["output"]))
    else:
        inits += [
            _const("zero", np.array(0.0, np.float32)),
            _const("rgb", np.array(colour, np.float32).reshape(1, 3, 1, 1)),
        ]
        nodes += [
            helper.make_node("Mul", [source, "zero"], ["nothing"]),
            helper.make_node("Add", ["nothing", "rgb"], ["output"]),
        ]
    return _save(helper.make_graph(nodes, "restorer", inputs, [y], inits), path)
