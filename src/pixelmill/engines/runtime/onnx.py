"""Lazy, thread-safe, load-once ONNX Runtime sessions for model files shipped inside packages.

Engines keep one :class:`OnnxModel` per model file at module level. Creating it costs nothing;
the file is read and the session built on first use (``load()`` or ``.session``), once per
process, under a lock. ``InferenceSession.run`` is itself thread-safe, so one session serves
every worker thread.

Model files come from installed packages (``packaged_file("rembg", "u2netp.onnx")``, or
pixelmill's own: ``packaged_file("pixelmill.engines.runtime", "models/u2netp-320.onnx")``) or from
``PIXELMILL_MODELS_DIR`` (:mod:`pixelmill.models`), never from a network hub.

Sessions run on the execution providers ``PIXELMILL_ONNX_PROVIDERS`` names (:func:`use_providers`,
called once at startup); by default CUDA where ``onnxruntime-gpu`` provides it, else the CPU.
The CPU provider is always last, so an operator a GPU provider lacks still runs.
"""

from __future__ import annotations

import os
import threading
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort

from pixelmill.engines.runtime.lazy import Lazy

DEFAULT_INTRA_OP_THREADS = 2
"""Threads per inference. The server runs several engine calls at once in a CPU-sized pool, so
each session stays small rather than claiming every core."""

ModelSource = str | os.PathLike[str] | Traversable

CPU = "CPUExecutionProvider"
SHORT_NAMES = {
    "cpu": CPU,
    "cuda": "CUDAExecutionProvider",
    "tensorrt": "TensorrtExecutionProvider",
    "rocm": "ROCMExecutionProvider",
    "migraphx": "MIGraphXExecutionProvider",
    "openvino": "OpenVINOExecutionProvider",
    "coreml": "CoreMLExecutionProvider",
    "directml": "DmlExecutionProvider",
}
"""``PIXELMILL_ONNX_PROVIDERS`` may name a provider by these short names or by ONNX Runtime's."""


def default_providers() -> list[str]:
    """CUDA then CPU where the installed ONNX Runtime has CUDA (``onnxruntime-gpu``), else CPU."""
    if "CUDAExecutionProvider" in ort.get_available_providers():
        return ["CUDAExecutionProvider", CPU]
    return [CPU]


def parse_providers(value: str | None) -> list[str]:
    """The providers a comma-separated ``PIXELMILL_ONNX_PROVIDERS`` value names, in order, with
    the CPU provider last; unset or empty: :func:`default_providers`. Raises ``ValueError``
    naming what this ONNX Runtime offers when a name is unknown or not installed."""
    names = [n.strip() for n in (value or "").split(",") if n.strip()]
    if not names:
        return default_providers()
    available = ort.get_available_providers()
    chosen: list[str] = []
    for name in names:
        full = SHORT_NAMES.get(name.lower(), name)
        if full not in available:
            raise ValueError(
                f"PIXELMILL_ONNX_PROVIDERS: {name} is not available in this ONNX Runtime "
                f"(available: {', '.join(available)}; a GPU needs onnxruntime-gpu, docs/models.md)"
            )
        if full not in chosen:
            chosen.append(full)
    if CPU in chosen:
        chosen.remove(CPU)
    return [*chosen, CPU]


class _Providers:
    """The execution providers every session is created with (set once at startup)."""

    chosen: list[str] | None = None


def use_providers(value: str | None) -> list[str]:
    """Set the providers from ``PIXELMILL_ONNX_PROVIDERS``'s value (sessions created after
    this use them) and return them."""
    _Providers.chosen = parse_providers(value)
    return list(_Providers.chosen)


def providers() -> list[str]:
    """The providers a new session gets."""
    if _Providers.chosen is None:
        _Providers.chosen = default_providers()
    return list(_Providers.chosen)


def packaged_file(package: str, resource: str) -> Traversable:
    """The model file ``resource`` inside the installed ``package`` (raises
    ``FileNotFoundError`` at first use if the package does not carry it)."""
    return files(package) / resource


def session_options(intra_op_threads: int, arena: bool = False) -> ort.SessionOptions:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = intra_op_threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Busy-waiting worker threads burn CPU that other requests on the same machine could use;
    # the latency cost of not spinning is a fraction of a millisecond per call.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # No CPU memory arena by default: the arena keeps its high-water mark for the life of the
    # process (a burst of requests left the server at 1.36x its idle RSS); without it the memory
    # of a run goes back to the allocator (bench/bench_burst.py: 1.03-1.06x idle 10 s after 360
    # concurrent 1 MP removals, peak 1.09-1.12 GB).
    opts.enable_cpu_mem_arena = arena
    if arena:
        # With an arena, ORT's planned one-block "memory pattern" made the arena grow in powers
        # of two to ~2x a run's need (u2netp: +462 MB RSS); per-tensor allocations reuse its
        # chunks as well and hold +269 MB, for the same speed (CPU 263 vs 271 ms per run).
        opts.enable_mem_pattern = False
    return opts


class OnnxModel:
    """One ONNX model file and its lazily created ``InferenceSession`` (on :func:`providers`).

    ``source`` may be a filesystem path or a :class:`Traversable` from
    :func:`packaged_file`; zipped packages are handled by reading the bytes.

    ``warm_arena``: one run at a time goes through a second session that keeps a CPU memory
    arena, so its buffers are reused instead of being mapped and faulted in afresh (u2netp at
    320²: ~230 MB of activations, ~65 ms of page faults per run on 2 cores; the run 194 -> 127
    ms at low load). Runs that overlap it use the arena-less session, so a burst adds no more
    than one run's transient memory per extra worker, as before, and the arena's size (about
    one run's need, held for the life of the process) does not grow with concurrency.
    """

    def __init__(
        self,
        source: ModelSource,
        intra_op_threads: int = DEFAULT_INTRA_OP_THREADS,
        *,
        warm_arena: bool = False,
    ):
        self._source = source
        self._intra_op_threads = intra_op_threads
        self._session = Lazy(self._create)
        self._warm_arena = warm_arena
        self._arena_session = Lazy(lambda: self._create(arena=True))
        self._arena_free = threading.Lock()

    @property
    def name(self) -> str:
        """The model file's name, for messages and ``details``."""
        if isinstance(self._source, Traversable):
            return self._source.name
        return Path(self._source).name

    @property
    def loaded(self) -> bool:
        """Whether the session has been created."""
        return self._session.loaded

    def load(self) -> None:
        """Create the session(s) if needed. Idempotent and safe to call from many threads."""
        self._session.load()
        if self._warm_arena:
            self._arena_session.load()

    @property
    def session(self) -> ort.InferenceSession:
        """The shared session, created on first access."""
        return self._session.get()

    def _create(self, arena: bool = False) -> ort.InferenceSession:
        opts = session_options(self._intra_op_threads, arena)
        chosen = providers()
        src = self._source
        if isinstance(src, Traversable) and not isinstance(src, Path):
            # A model inside a zip or other non-filesystem package: hand ORT the bytes.
            return ort.InferenceSession(src.read_bytes(), sess_options=opts, providers=chosen)
        return ort.InferenceSession(os.fspath(src), sess_options=opts, providers=chosen)

    @property
    def input_names(self) -> list[str]:
        """Names of the model's inputs, in order."""
        return [i.name for i in self.session.get_inputs()]

    def run(self, feeds: dict[str, npt.NDArray[Any]]) -> list[npt.NDArray[Any]]:
        """Run the model on ``feeds`` (input name -> array) and return every output."""
        if self._warm_arena and self._arena_free.acquire(blocking=False):
            try:
                outputs = self._arena_session.get().run(None, feeds)
            finally:
                self._arena_free.release()
        else:
            outputs = self.session.run(None, feeds)
        return [np.asarray(o) for o in outputs]

    def run_single(self, x: npt.NDArray[Any]) -> list[npt.NDArray[Any]]:
        """Run a single-input model on ``x`` and return every output."""
        return self.run({self.input_names[0]: x})
