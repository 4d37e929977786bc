"""The compiled loops of :mod:`.regions` (numba), in a module of their own so that numba is
imported only when they are first needed (:data:`.regions.COMPILED`). The functions are typed
by numba at their first call; to mypy they are ``Any``."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np


def _jit(fn: Any) -> Any:
    """``fn`` compiled without the GIL, cached on disk where numba finds a writable place
    (beside this file, or its user-wide cache), else compiled in memory in each process."""
    try:
        return numba.njit(cache=True, nogil=True)(fn)
    except RuntimeError:  # numba: "cannot cache function ...: no locator available"
        return numba.njit(nogil=True)(fn)


@_jit
def root(forest: Any, n: Any) -> Any:
    """The root of ``n``'s tree (a region's smallest pixel index), halving the path on the
    way (every node visited then points to its grandparent; no root changes)."""
    while forest[n] < n:
        forest[n] = forest[forest[n]]
        n = forest[n]
    return n


@_jit
def point(forest: Any, n: Any, top: Any) -> None:
    """Every node on ``n``'s path made to point to ``top``."""
    while forest[n] < n:
        up = forest[n]
        forest[n] = top
        n = up
    forest[n] = top


@_jit
def join(forest: Any, a: Any, b: Any) -> Any:
    """The trees of ``a`` and ``b`` joined under the smaller of their roots; that root."""
    top = min(root(forest, a), root(forest, b))
    point(forest, a, top)
    point(forest, b, top)
    return top


@_jit
def weights(smooth: Any) -> Any:
    """The Euclidean distance between the two pixels of each edge of ``smooth`` (H × W × 3,
    float64), stacked as :func:`ends` reads them. Summed as NumPy sums the three squares
    (``(r² + g²) + b²``), so the weights are NumPy's to the bit and sort the same."""
    h, w = smooth.shape[0], smooth.shape[1]
    out = np.empty(h * (w - 1) + (h - 1) * w + 2 * (h - 1) * (w - 1))
    k = 0
    # right, down, down-right, up-right: (row, column) offsets of the two pixels
    for y0, x0, y1, x1, rows, cols in (
        (0, 1, 0, 0, h, w - 1),
        (1, 0, 0, 0, h - 1, w),
        (1, 1, 0, 0, h - 1, w - 1),
        (1, 0, 0, 1, h - 1, w - 1),
    ):
        for y in range(rows):
            for x in range(cols):
                r = smooth[y + y0, x + x0, 0] - smooth[y + y1, x + x1, 0]
                g = smooth[y + y0, x + x0, 1] - smooth[y + y1, x + x1, 1]
                b = smooth[y + y0, x + x0, 2] - smooth[y + y1, x + x1, 2]
                out[k] = np.sqrt((r * r + g * g) + b * b)
                k += 1
    return out


@_jit
def ends(order: Any, h: Any, w: Any) -> Any:
    """The two pixels (flat indices) of each edge in ``order``, an order of the edges of an
    ``h`` × ``w`` grid stacked as right (h × (w-1)), down ((h-1) × w), down-right and up-right
    ((h-1) × (w-1) each)."""
    right = h * (w - 1)
    down = right + (h - 1) * w
    diagonal = down + (h - 1) * (w - 1)
    a = np.empty(order.size, np.intp)
    b = np.empty(order.size, np.intp)
    for k in range(order.size):
        e = order[k]
        if e < right:
            y, x = e // (w - 1), e % (w - 1)
            a[k], b[k] = y * w + x + 1, y * w + x
        elif e < down:
            e -= right
            a[k], b[k] = e + w, e
        elif e < diagonal:
            e -= down
            y, x = e // (w - 1), e % (w - 1)
            a[k], b[k] = (y + 1) * w + x + 1, y * w + x
        else:
            e -= diagonal
            y, x = e // (w - 1), e % (w - 1)
            a[k], b[k] = y * w + x + 1, (y + 1) * w + x
    return a, b


@_jit
def merge(a: Any, b: Any, weights: Any, pixels: Any, scale: Any, min_size: Any) -> Any:
    """Felzenszwalb's greedy merge over the edges (``a[e]``, ``b[e]``) sorted by ``weights``,
    then the clean-up of regions under ``min_size``; int32 labels numbered by first pixel."""
    forest = np.arange(pixels)
    size = np.ones(pixels, np.intp)
    inner = np.zeros(pixels)
    for e in range(weights.size):
        r0, r1 = root(forest, a[e]), root(forest, b[e])
        if r0 == r1:
            continue
        # Single precision, as scikit-image compares them.
        t0 = np.float32(inner[r0] + scale / size[r0])
        t1 = np.float32(inner[r1] + scale / size[r1])
        if weights[e] < min(t0, t1):
            top = join(forest, r0, r1)
            size[top] = size[r0] + size[r1]
            inner[top] = weights[e]
    # Every node straight to its root (in index order a parent, smaller, is done first): the
    # clean-up's lookups are then one step until it joins.
    for i in range(pixels):
        forest[i] = forest[forest[i]]
    for e in range(weights.size):
        r0, r1 = root(forest, a[e]), root(forest, b[e])
        if r0 != r1 and (size[r0] < min_size or size[r1] < min_size):
            top = join(forest, r0, r1)
            size[top] = size[r0] + size[r1]
    labels = np.empty(pixels, np.int32)
    count = 0
    for i in range(pixels):
        r = root(forest, i)
        if r == i:
            labels[i] = count
            count += 1
        else:
            labels[i] = labels[r]
    return labels


@_jit
def region_sums(labels: Any, n: Any, weights: Any) -> Any:
    """``n`` × K sums of the K rows of ``weights`` (K × pixels, float64) over each label of
    ``labels`` (flat, 0..n-1): K ``np.bincount(labels, weights=row, minlength=n)`` in one pass,
    summed in the same (pixel) order, so the same to the bit."""
    k = weights.shape[0]
    out = np.zeros((n, k))
    for i in range(labels.size):
        r = labels[i]
        for j in range(k):
            out[r, j] += weights[j, i]
    return out


@_jit
def contacts(labels: Any, n: Any) -> Any:
    """``n`` × ``n`` counts (int32, symmetric) of the 4-neighbour pixel pairs between regions of
    ``labels`` (H × W, 0..n-1)."""
    h, w = labels.shape
    out = np.zeros((n, n), np.int32)
    for y in range(h):
        for x in range(w):
            a = labels[y, x]
            if x + 1 < w:
                b = labels[y, x + 1]
                if a != b:
                    out[a, b] += 1
                    out[b, a] += 1
            if y + 1 < h:
                b = labels[y + 1, x]
                if a != b:
                    out[a, b] += 1
                    out[b, a] += 1
    return out


@_jit
def argsort(weights: Any) -> Any:
    """The order that sorts ``weights`` (float64, none negative), equal weights by index:
    ``np.argsort(weights, kind="stable")``, by a least-significant-digit radix sort on the
    weights' bits (for non-negative floats their order as unsigned integers), 11 bits a pass,
    skipping the passes where every key has the same digit."""
    n = weights.size
    keys = weights.view(np.uint64)
    order = np.arange(n)
    spare = np.empty(n, np.int64)
    count = np.empty(2049, np.int64)
    for shift in range(0, 64, 11):
        count[:] = 0
        for i in range(n):
            count[((keys[order[i]] >> shift) & 2047) + 1] += 1
        if count.max() == n:
            continue
        for j in range(2048):
            count[j + 1] += count[j]
        for i in range(n):
            digit = (keys[order[i]] >> shift) & 2047
            spare[count[digit]] = order[i]
            count[digit] += 1
        order, spare = spare, order
    return order
