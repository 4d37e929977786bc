"""Context networks run with their per-image gains folded into constant weights.

A context network (``context.py``) multiplies every body layer's output by a per-channel gain
computed from the image statistics. Run as exported, those broadcast multiplications sit between
the convolutions and keep onnxruntime from running the stack in its blocked NCHWc layout with
pre-packed weights and fused ReLUs (a 0.25 MP tile of the balanced ×2 network: 73 ms against 50
without them). The gains are positive, so ``g * relu(W x + b) = relu((g W) x + g b)``: they
fold into the weights.

``training/sr/fold.py`` splits each exported context network into two graphs shipped beside it:
``<stem>-context.onnx`` (statistics -> the folded weights and biases of every body layer) and
``<stem>-plain.onnx`` (the network without the multiplications, whose body weights and biases
are external initialisers the file does not carry). A mixture network (``training/sr/model.py``,
``MixSRNet``: every convolution a per-image blend of expert kernels) ships the same pair from
``training/sr/export.py``; its context graph gives every layer's blended weights, all of which
the plain graph takes as external initialisers. :meth:`FoldedNetwork.bind` runs the first
once per image and builds a session of the second with its outputs as those initialisers
(about 3 ms): the convolutions see constants, and the result equals the exported network's to
float rounding (the tests compare them on real images).
"""

from __future__ import annotations

from importlib.resources.abc import Traversable

import numpy as np
import numpy.typing as npt
import onnxruntime as ort

from pixelmill.engines.runtime.lazy import Lazy
from pixelmill.engines.runtime.onnx import DEFAULT_INTRA_OP_THREADS, OnnxModel, session_options

PLAIN_SUFFIX = "-plain.onnx"
CONTEXT_SUFFIX = "-context.onnx"


class BoundNetwork:
    """The plain network with one image's folded weights: a session of its own, used for every
    tile of that image and then dropped."""

    def __init__(self, plain: bytes, weights: dict[str, npt.NDArray[np.float32]], threads: int):
        opts = session_options(threads)
        names = sorted(weights)
        # The session reads from these buffers: keep them alive as long as it is.
        self._values = [ort.OrtValue.ortvalue_from_numpy(weights[n]) for n in names]
        opts.add_external_initializers(names, self._values)
        self._session = ort.InferenceSession(
            plain, sess_options=opts, providers=["CPUExecutionProvider"]
        )
        self._input = self._session.get_inputs()[0].name

    def run(self, y_lr: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """``(1, 1, h, w)`` low-resolution luma -> the network's high-resolution luma."""
        out = self._session.run(None, {self._input: y_lr})[0]
        return np.asarray(out, dtype=np.float32)


class FoldedNetwork:
    """One context network as its two folded graphs (``<stem>-context.onnx`` and
    ``<stem>-plain.onnx`` beside ``<stem>.onnx`` in ``folder``). Loading is lazy and happens
    once per process, like :class:`OnnxModel`."""

    def __init__(
        self, folder: Traversable, stem: str, intra_op_threads: int = DEFAULT_INTRA_OP_THREADS
    ) -> None:
        self.context = OnnxModel(folder / (stem + CONTEXT_SUFFIX), intra_op_threads=1)
        self._plain_file = folder / (stem + PLAIN_SUFFIX)
        self._plain = Lazy(self._plain_file.read_bytes)
        self._threads = intra_op_threads

    @property
    def files(self) -> tuple[str, str]:
        """The names of the two graphs (context, plain)."""
        return self.context.name, self._plain_file.name

    def load(self) -> None:
        """Create the context session and read the plain graph now (idempotent)."""
        self.context.load()
        self._plain.load()

    def bind(self, stats: npt.NDArray[np.float32]) -> BoundNetwork:
        """The network for an image whose statistics (``context.image_stats``) are ``stats``."""
        feeds = {self.context.input_names[0]: np.asarray(stats, np.float32).reshape(1, -1)}
        names = [o.name for o in self.context.session.get_outputs()]
        weights = dict(zip(names, self.context.run(feeds), strict=True))
        return BoundNetwork(self._plain.get(), weights, self._threads)
