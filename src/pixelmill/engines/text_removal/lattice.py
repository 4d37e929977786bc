"""Periodic consensus: a tiled watermark's coverage averaged over its own lattice.

A tiled watermark repeats one text on a 2-D lattice (``n v1 + m v2``). The network's coverage
``k`` finds some copies well, others partly (on busy or similar-coloured photo content), and
fires on photo edges that do not repeat. ``find()`` estimates the lattice from the
autocorrelation of ``k`` (FFT, zero-padded, normalised by the overlap at each lag); if two
non-collinear lattice vectors give a strong, self-consistent peak, ``consensus()`` averages ``k``
over the lattice translates (counting only the translates that fall inside the image): the
watermark adds up coherently, photo edges and false detections average out. No lattice (a single
line of text, captions, logos, no overlay): ``find()`` returns ``None`` and nothing changes.

numpy + OpenCV only (the training code under ``training/overlay/`` imports this module too).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

Float = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Lattice:
    v1: tuple[float, float]  # (dy, dx), pixels
    v2: tuple[float, float]
    score: float  # the weakest normalised autocorrelation over v1, v2, v1 + v2, v1 - v2


def _autocorr(f: Float, min_overlap: float) -> Float:
    """Normalised autocorrelation of ``f`` (zero mean), lags centred, ``NaN`` where the overlap
    is below ``min_overlap`` of the image."""
    h, w = f.shape
    ph, pw = cv2.getOptimalDFTSize(2 * h), cv2.getOptimalDFTSize(2 * w)
    pad = np.zeros((ph, pw), np.float32)
    pad[:h, :w] = f
    one = np.zeros((ph, pw), np.float32)
    one[:h, :w] = 1.0

    def ac(x: Float) -> Float:
        spec = cv2.dft(x, flags=cv2.DFT_COMPLEX_OUTPUT)
        power = cv2.mulSpectrums(spec, spec, 0, conjB=True)
        back = cv2.dft(power, flags=cv2.DFT_INVERSE | cv2.DFT_SCALE | cv2.DFT_REAL_OUTPUT)
        return np.asarray(back, np.float32)

    a, n = ac(pad), ac(one)
    a = np.fft.fftshift(a)
    n = np.fft.fftshift(n)
    out = np.full_like(a, np.nan)
    ok = n >= min_overlap * h * w
    out[ok] = a[ok] / n[ok]
    out /= float(a[ph // 2, pw // 2] / n[ph // 2, pw // 2]) + 1e-12
    return out


def _peak(a: Float, cy: int, cx: int, dy: int, dx: int) -> tuple[float, float, float]:
    """Sub-pixel (parabolic) position and value of the peak of ``a`` at lag ``(dy, dx)``."""
    y, x = cy + dy, cx + dx
    v = float(a[y, x])
    oy = ox = 0.0
    if 0 < y < a.shape[0] - 1:
        lo, hi = float(a[y - 1, x]), float(a[y + 1, x])
        den = lo - 2 * v + hi
        if np.isfinite(den) and den < 0:
            oy = float(np.clip(0.5 * (lo - hi) / den, -0.5, 0.5))
    if 0 < x < a.shape[1] - 1:
        lo, hi = float(a[y, x - 1]), float(a[y, x + 1])
        den = lo - 2 * v + hi
        if np.isfinite(den) and den < 0:
            ox = float(np.clip(0.5 * (lo - hi) / den, -0.5, 0.5))
    return dy + oy, dx + ox, v


def find(
    k: Float,
    min_score: float = 0.25,
    min_period: int = 24,
    min_overlap: float = 0.3,
    scale: int = 2,
    highpass: float = 3.0,
    strong_share: float = 0.6,
    min_cells: float = 3.0,
    tolerance: int = 1,
    far_overlap: float = 0.5,
    candidates: int = 3,
    alt_score: float = 0.15,
) -> Lattice | None:
    """The lattice of the periodic part of ``k`` (H, W, 0..1), or ``None`` if it has none
    (``min_score``: the normalised autocorrelation every basic lattice vector must reach).

    ``tolerance``: each combination of the basis is read as the highest value within this many
    pixels (at ``1 / scale``) of its rounded lag, since the rounding of ``v1`` and ``v2`` adds up
    in ``n v1 + m v2``. ``far_overlap``: the doubled vectors ``2 v1``, ``2 v2`` are checked only
    where the image overlaps itself by at least this share at that lag (at long lags few pixels
    pair up and the normalised autocorrelation is noise: a lattice of two or three tiles per
    direction was refused on it). ``candidates``: how many of the shortest strong peaks are
    tried as each basis vector (1: the shortest alone); a basis other than the first must reach
    ``alt_score`` as well as ``min_score`` (a second guess needs clearer periodicity)."""
    if min(k.shape) < 4 * min_period:
        return None
    f = k
    if scale > 1:
        f = np.asarray(
            cv2.resize(k, (k.shape[1] // scale, k.shape[0] // scale), interpolation=cv2.INTER_AREA),
            np.float32,
        )
    if highpass > 0:
        f = f - np.asarray(cv2.GaussianBlur(f, (0, 0), highpass), np.float32)
    f = f - np.float32(f.mean())
    if float(np.abs(f).max()) < 1e-3:
        return None
    raw = _autocorr(f, min_overlap)
    valid = np.isfinite(raw)
    # a little smoothing: a sharp peak at a lag between two pixels must not look weak
    a = np.asarray(cv2.GaussianBlur(np.nan_to_num(raw, nan=-1.0), (0, 0), 0.7), np.float32)
    cy, cx = a.shape[0] // 2, a.shape[1] // 2
    filled = np.where(valid, a, np.float32(-1.0))
    local = filled >= cv2.dilate(filled, np.ones((5, 5), np.uint8))
    ys, xs = np.nonzero(local & (filled >= min_score))
    dy, dx = ys - cy, xs - cx
    r = np.hypot(dy, dx)
    keep = (r * scale >= min_period) & ((dy > 0) | ((dy == 0) & (dx > 0)))  # one half-plane
    dy, dx, r = dy[keep], dx[keep], r[keep]
    if dy.size < 2:
        return None
    vals = filled[dy + cy, dx + cx]
    strong = vals >= strong_share * float(vals.max())
    # The basis: the shortest strong peak v1 and the shortest strong peak off its line v2 (the
    # only try until 2026-11-26). Where that basis fails the checks (a letter repeated within a
    # row can put a peak just above the strong share), the next shortest strong peaks are tried
    # too, ``candidates`` of each, and of the bases that pass, the one whose combinations score
    # best on average is taken (the weakest combination can be a peak two bases share).
    check = _BasisCheck(
        filled, valid, cy, cx, f.shape, min_period / scale, min_cells, tolerance, far_overlap
    )
    passed: list[tuple[float, F64, F64, float]] = []
    firsts = np.argsort(np.where(strong, r, np.inf))[: min(candidates, int(strong.sum()))]
    for n1, i1 in enumerate(firsts):
        v1 = np.array([dy[i1], dx[i1]], np.float64)
        # v2 off v1's line (> ~20 degrees)
        off = np.abs(dy * v1[1] - dx * v1[0]) > 0.35 * r[i1] * r
        if not off.any():
            continue
        strong2 = off & (vals >= strong_share * float(vals[off].max()))
        seconds = np.argsort(np.where(strong2, r, np.inf))[: min(candidates, int(strong2.sum()))]
        for n2, j in enumerate(seconds):
            found = check(v1, np.array([dy[j], dx[j]], np.float64))
            first = n1 == n2 == 0
            need = min_score if first else max(min_score, alt_score)
            if found is None or min(found[2]) < need:
                continue
            b1, b2, scores = found
            if first:
                return _lattice(filled, cy, cx, b1, b2, min(scores), scale)
            passed.append((float(np.mean(scores)), b1, b2, min(scores)))
    if not passed:
        return None
    _, b1, b2, score = max(passed, key=lambda t: t[0])
    return _lattice(filled, cy, cx, b1, b2, score, scale)


def _lattice(a: Float, cy: int, cx: int, v1: F64, v2: F64, score: float, scale: int) -> Lattice:
    """The lattice of basis ``v1``, ``v2`` (at ``1 / scale``), each refined to its sub-pixel
    peak on the autocorrelation ``a``."""
    p1 = _peak(a, cy, cx, int(v1[0]), int(v1[1]))
    p2 = _peak(a, cy, cx, int(v2[0]), int(v2[1]))
    return Lattice((p1[0] * scale, p1[1] * scale), (p2[0] * scale, p2[1] * scale), score)


@dataclass(frozen=True)
class _BasisCheck:
    """Reduces a candidate basis (at ``1 / scale``) and scores it on the autocorrelation."""

    filled: Float
    valid: npt.NDArray[np.bool_]
    cy: int
    cx: int
    shape: tuple[int, ...]
    min_period: float
    min_cells: float
    tolerance: int
    far_overlap: float

    def __call__(self, v1: F64, v2: F64) -> tuple[F64, F64, list[float]] | None:
        """The reduced basis and its combinations' scores, or None if it is refused."""
        # Lagrange-Gauss reduction: the shortest basis of the same lattice
        for _ in range(20):
            if v1 @ v1 > v2 @ v2:
                v1, v2 = v2, v1
            q = round(float(v1 @ v2) / float(v1 @ v1))
            if q == 0:
                break
            v2 = v2 - q * v1
        if np.hypot(*v1) < self.min_period:
            return None
        # the image must hold a few cells of the lattice (a handful of lags on a small image
        # can line up by chance)
        fh, fw = self.shape[0], self.shape[1]
        if abs(float(v1[0] * v2[1] - v1[1] * v2[0])) * self.min_cells > fh * fw:
            return None
        # Every short combination must be a peak too (a pattern that repeats only along some
        # of them, e.g. rows shifted alternately, is not a lattice: pooling it would blur it).
        # Lags beyond the overlap limit are not checked (v1 and v2 must be in range).
        a, cy, cx, t = self.filled, self.cy, self.cx, self.tolerance
        scores = []
        for n, m in ((1, 0), (0, 1), (1, 1), (1, -1), (2, 0), (0, 2)):
            v = n * v1 + m * v2
            y, x = round(v[0]) + cy, round(v[1]) + cx
            inside = 0 <= y < a.shape[0] and 0 <= x < a.shape[1] and bool(self.valid[y, x])
            if not inside:
                if n + abs(m) == 1:
                    return None
                continue
            if (n, m) in ((2, 0), (0, 2)):
                overlap = (1 - abs(v[0]) / fh) * (1 - abs(v[1]) / fw)
                if overlap < self.far_overlap:
                    continue
            scores.append(float(a[max(0, y - t) : y + t + 1, max(0, x - t) : x + t + 1].max()))
        return v1, v2, scores


def translates(lat: Lattice, reach: int, h: int, w: int) -> list[tuple[float, float]]:
    out = []
    for n in range(-reach, reach + 1):
        for m in range(-reach, reach + 1):
            ty = n * lat.v1[0] + m * lat.v2[0]
            tx = n * lat.v1[1] + m * lat.v2[1]
            if abs(ty) < h and abs(tx) < w:
                out.append((ty, tx))
    return out


def shift_sum(x: Float, moves: list[tuple[float, float]], exact: bool = False) -> Float:
    """``sum_t x(p + t)`` over the translates (zero outside the image): shifts rounded to whole
    pixels, or bilinear (``exact``; 3-4x slower)."""
    h, w = x.shape
    acc = np.zeros((h, w), np.float32)
    if exact:
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
        for ty, tx in moves:
            mat = np.array([[1.0, 0.0, tx], [0.0, 1.0, ty]], np.float64)
            acc += cv2.warpAffine(x, mat, (w, h), flags=flags, borderValue=0.0)
        return acc
    for ty, tx in moves:
        dy, dx = round(ty), round(tx)
        if abs(dy) >= h or abs(dx) >= w:
            continue
        # acc[p] += x[p + d] where both are inside
        acc[max(0, -dy) : h - max(0, dy), max(0, -dx) : w - max(0, dx)] += x[
            max(0, dy) : h + min(0, dy), max(0, dx) : w + min(0, dx)
        ]
    return acc


def consensus(k: Float, lat: Lattice, reach: int = 2, exact: bool = False) -> Float:
    """Mean of ``k`` over the translates ``n v1 + m v2`` (|n|, |m| <= ``reach``) that land in
    the image (per pixel, only those)."""
    h, w = k.shape
    moves = translates(lat, reach, h, w)
    acc = shift_sum(k, moves, exact)
    cnt = shift_sum(np.ones((h, w), np.float32), moves, exact)
    return np.asarray(acc / np.maximum(cnt, 1e-6), np.float32)
