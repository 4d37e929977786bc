"""Felzenszwalb and Huttenlocher's graph segmentation ("Efficient graph-based image
segmentation", IJCV 2004) for one small image at several scales: the regions
:mod:`.parts` votes on.

The result is scikit-image's ``felzenszwalb(image, scale, sigma, min_size)``, label for label
wherever equal edge weights do not decide (``tests/engines/background/test_regions.py``
compares them), made ~5x cheaper in three ways:

- the smoothing, the 8-neighbour edge weights and their sort depend on ``sigma`` only, so
  :func:`segmentations` does them once for every scale of that sigma (scikit-image does them on
  each call). The smoothing is scikit-image's; the weights are summed in NumPy's order, so they
  are the same to the bit;
- they are sorted by a compiled radix sort (~1 ms for the 65k edges of a 128 px copy against
  ~3.6 ms for NumPy's ``argsort``), which keeps equal weights in index order (NumPy's default
  sort, which scikit-image calls, leaves them in an order of its own). Zero weights (flat
  colour, the common tie) merge in any order; on 1,812 segmentations (CBSD68, 40 photos each
  of CUrban100 and CSun_Hays80, the multi-part and shadow sets, coffee's centre square; six
  settings each) the labels are scikit-image's all the same;
- the weights, the greedy merge over the sorted edges, the small-region clean-up and the
  labelling run as compiled loops (numba, :mod:`.regions_compiled`), with path halving in the
  union-find (it shortens paths without changing any root: a root stays its region's smallest
  pixel index, as there).

The merge keeps scikit-image's arithmetic: a region's threshold (its largest merged edge plus
``scale / 255 / size``) is rounded to single precision before the edge's weight is compared
with it, and the clean-up joins a region smaller than ``min_size`` across its lightest
remaining edge, counting sizes as it goes.

Six segmentations of a 128 px copy (the parts step's): 11-13 ms against scikit-image's
47-58 ms (the same machine, 2 cores) with NumPy's sort, ~3 ms less with the radix sort. The
second sigma's edges and merges run on a worker thread beside the first's and the caller's work
on them (:func:`segmentations`): the parts step's own time on coffee's centre square at 1 MP
22.8 → 17.6 ms (median in the engine), the same CPU time, labels unchanged. numba
costs ~0.5 s and ~57 MB of private memory (~120 MB more of its shared library, mapped and
shared between processes) in a process that imports it, and compiles these loops once (~5 s;
~0.8 s when they are read from its cache, beside this file or numba's user-wide cache, or
``NUMBA_CACHE_DIR``): :data:`COMPILED` is loaded with the engines
that cut out (their ``models``) or on first use, never at import.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt
from skimage.filters import gaussian
from skimage.util import img_as_float64

from pixelmill.engines.runtime.lazy import Lazy

Labels = npt.NDArray[np.int32]


def _compile() -> Any:
    """The compiled loops (the module :mod:`.regions_compiled`): numba is imported, and the
    loops compiled or read from its cache, on first use."""
    from pixelmill.engines.background import regions_compiled as compiled

    # Compiled (or read from the cache) now, for the argument types every later call has.
    weights = compiled.weights(np.zeros((2, 2, 3)))
    a, b = compiled.ends(compiled.argsort(weights), 2, 2)
    labels = compiled.merge(a, b, np.sort(weights), 4, 1.0, 1)
    compiled.region_sums(labels, 1, np.zeros((1, 4)))
    compiled.contacts(labels.reshape(2, 2), 1)
    return compiled


COMPILED = Lazy(_compile)
"""The compiled loops: a :class:`~pixelmill.engines.base.Loadable` for engines' ``models``."""

_WAIT = 30.0
"""Seconds the worker waits for the caller to take a segmentation before it gives up (and
reports it to the caller, should it ask again): a generator abandoned without being closed (kept
alive by a traceback, say) must not hold a thread, nor the interpreter's exit that joins it."""
_POOL: dict[int, ThreadPoolExecutor] = {}
"""The worker threads of :func:`segmentations`, per process (by pid)."""


def _worker() -> ThreadPoolExecutor:
    """Where :func:`segmentations` computes the runs of settings after the first: this process's
    pool of two threads (two requests may segment at once), started on first use. A process
    forked from one that had used it (a prefork worker) gets its own: the parent's threads do not
    exist in the child, and its pool would queue the work for them forever."""
    pid = os.getpid()
    pool = _POOL.get(pid)
    if pool is None:
        _POOL.clear()
        pool = _POOL[pid] = ThreadPoolExecutor(max_workers=2, thread_name_prefix="regions")
    return pool


def _sorted_edges(
    image: npt.NDArray[np.uint8], sigma: float
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    """The 8-neighbour edges of ``image`` smoothed with ``sigma``, lightest first: their two
    pixels' flat indices and their weights (Euclidean distance in 0..1 RGB)."""
    unit = img_as_float64(image)  # type: ignore[no-untyped-call]
    smooth = np.asarray(
        gaussian(unit, sigma=[sigma, sigma, 0], mode="reflect", channel_axis=-1)  # type: ignore[no-untyped-call]
    )
    h, w = smooth.shape[:2]
    compiled = COMPILED.get()
    weights = np.asarray(compiled.weights(np.ascontiguousarray(smooth, np.float64)), np.float64)
    order = compiled.argsort(weights)
    a, b = compiled.ends(order, h, w)
    return a, b, np.ascontiguousarray(weights[order])


def region_sums(
    labels: Labels, n: int, weights: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """``n`` × K: each row of ``weights`` (K × pixels) summed over each label (0..n-1) of
    ``labels``; ``np.bincount(labels.ravel(), weights=row, minlength=n)`` for every row at
    once, to the bit."""
    flat = np.ascontiguousarray(labels.ravel(), np.int32)
    rows = np.ascontiguousarray(weights, np.float64)
    return np.asarray(COMPILED.get().region_sums(flat, n, rows), np.float64)


def contacts(labels: Labels, n: int) -> npt.NDArray[np.int32]:
    """``n`` × ``n`` (symmetric): the 4-neighbour pixel pairs between each two regions of
    ``labels`` (H × W, 0..n-1)."""
    grid = np.ascontiguousarray(labels, np.int32)
    return np.asarray(COMPILED.get().contacts(grid, n), np.int32)


def _chain(
    image: npt.NDArray[np.uint8],
    sigma: float,
    scales: Sequence[float],
    min_size: int,
    go: Callable[[], bool] = lambda: True,
) -> Iterator[Labels]:
    """The regions of ``image`` for each of ``scales`` at one ``sigma``, its edges sorted once;
    ``go`` is asked before the edges and each merge, and nothing more is computed once it says
    no."""
    h, w = image.shape[:2]
    merge = COMPILED.get().merge
    edges: tuple[Any, ...] | None = None
    for scale in scales:
        if not go():
            return
        if edges is None:
            edges = _sorted_edges(image, sigma)
        a, b, weights = edges
        labels = merge(a, b, weights, h * w, float(scale) / 255.0, min_size)
        yield np.asarray(labels, np.int32).reshape(h, w)


def segmentations(
    image: npt.NDArray[np.uint8], settings: Sequence[tuple[float, float]], min_size: int
) -> Iterator[Labels]:
    """The regions of ``image`` (H × W × 3, 8-bit) for each ``(sigma, scale)`` of ``settings``,
    in order, as int32 labels 0..n-1 (numbered by their first pixel in raster order): each
    scikit-image's ``felzenszwalb(image, scale=scale, sigma=sigma, min_size=min_size)``. A
    sigma's edges are sorted once for the run of settings that share it.

    The first run is computed here, as it is asked for; the later runs (other sigmas) on a
    worker thread (:func:`_worker`), whose compiled loops hold no GIL, one merge ahead of what
    the caller has taken: while the caller works on the first run, the worker sorts the next
    sigma's edges and makes its first segmentation; each one the caller takes lets it start the
    next. A caller that stops early stops the worker before its next merge, so at most the one
    merge it had begun is spent for nothing."""
    runs: list[tuple[float, list[float]]] = []
    for sigma, scale in settings:
        if runs and runs[-1][0] == sigma:
            runs[-1][1].append(scale)
        else:
            runs.append((sigma, [scale]))
    if len(runs) == 1:
        yield from _chain(image, *runs[0], min_size)
        return
    stop = threading.Event()
    ahead = threading.Semaphore(1)  # merges the worker may start beyond what was taken
    done: queue.Queue[Labels | BaseException] = queue.Queue()

    def go() -> bool:
        if not ahead.acquire(timeout=_WAIT):
            raise TimeoutError(f"segmentations: none was taken for {_WAIT:.0f} s")
        return not stop.is_set()

    def later() -> None:
        try:
            for sigma, scales in runs[1:]:
                for labels in _chain(image, sigma, scales, min_size, go):
                    done.put(labels)
        except BaseException as error:  # handed to the caller's thread, raised there
            done.put(error)

    _worker().submit(later)
    try:
        yield from _chain(image, *runs[0], min_size)
        for _ in range(len(settings) - len(runs[0][1])):
            item = done.get()
            if isinstance(item, BaseException):
                raise item
            ahead.release()
            yield item
    finally:
        stop.set()
        ahead.release()  # a worker waiting to go on wakes, and stops
