"""Overlay opacity and colour from coverage, fitted by robust least squares, then unmixed.

A watermark (and most logos) is one flat colour ``c`` at one opacity ``a`` laid through an
anti-aliased glyph *coverage* ``k`` (0..1). The network predicts ``k`` (where the overlay is,
whatever its opacity; a 7-output network's opacity channel serves, up to a scale the fit
absorbs); with a background estimate ``b`` under each covered pixel (from the uncovered
neighbours, ``background()``: strokes are thin),

    observed - b = k a (c - b) = k (a c) - k a b

is linear in ``(a c, a)``: four unknowns, three equations per covered pixel, solved by
iteratively re-weighted least squares (Huber weights) for the whole image; regions of the
overlay (covered pixels connected after a small dilation) the fit would make worse are kept
as they are. If the fit explains too little of ``observed - b``
(``Settings.min_explained``; where no opaque stroke was found, each pixel weighted by its
coverage, ``Settings.judge_power``), nothing is unmixed: the image is left as it is. Where the photo
under the overlay is flat, opacity and colour trade off and the fit slides towards opacity 1
(above ``Settings.max_opacity``): then the network's opacity head gives the opacity and the
colour is fitted for it (``Settings.head_explained``). Where no opaque stroke was found and the
free fit passes the gates, it is fitted again where the photo around the overlay is flattest
and used if that passes too (``Settings.fit_flat``: a background estimate smoother than the
photo pushes the fitted opacity up). Otherwise, exactly,
``clean = (observed - a k c) / (1 - a k)``; pixels where ``a k`` is near 1 carry nothing of the
photo and are inpainted instead.

Opaque strokes are taken from the network's own opacity head (``alpha``): connected regions of
it above ``Settings.net_fill`` are inpainted if they have a confident core (``Settings.core``),
with a 1-px ring of their anti-aliased edge (``Settings.halo``), unless they are near-white
solid blobs that fade into the photo around them (a specular highlight, ``Settings.glow``);
where the image's fit finds an opaque overlay that explains the coverage, the covered letters
grouped with those strokes are filled too (``Settings.sibling_explained``). A filled region
whose opacity the head and a fit against its own fill agree is well under 1 is unmixed with
that fit instead (``Settings.semi_opacity``).

numpy + OpenCV only (the training code under ``training/overlay/`` imports this module too).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import cv2
import numpy as np
import numpy.typing as npt

if TYPE_CHECKING or __package__:
    from pixelmill.engines.text_removal import lattice
else:  # imported as a top-level module by training/overlay (its torch venv has no pixelmill)
    import lattice

Float = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
U8 = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class Settings:
    """The fit's settings; how each tuned one was chosen (before and after, with the figures)
    is in the model card, ``models/MODEL_CARD.md``, "The fit's settings, one by one"."""

    low: float = 0.2
    """Coverage from which a pixel may belong to an overlay ..."""
    high: float = 0.5
    """... if its connected region reaches this coverage somewhere (hysteresis)."""
    fit_min: float = 0.3
    """Only pixels with at least this coverage enter the fits (anti-aliased edges are noisy)."""
    fit_core: float = 0.75
    """The image's opacity and colour are fitted on the pixels with at least this coverage
    (where more than ``min_fit_pixels`` have it); how much the fit explains is still judged
    on all the ``fit_min`` pixels (0: fitted on those too). Where the network under-covers a
    watermark's glyphs, those weakly covered pixels pull the opacity up and the confidently
    covered letters come out as bright ghosts; raising ``fit_min`` instead would let false
    detections on texture pass ``min_explained``."""
    fit_flat: float = 0.5
    """Where no opaque stroke was found and the image's free fit passes the gates, it is fitted
    again on this share of its ``fit_core`` pixels, those where the photo around the overlay is
    flattest (``local_std()``), taken alike from ``flat_bins`` bands of the background's
    lightness, and that fit is used if it passes the gates too (0: never). The background
    estimate is smoother than the photo under the overlay, and fitted against it the opacity
    comes out too high (regression dilution): unmixed, a dark watermark over a bright sky comes
    back as bright ghosts."""
    flat_sigma: float = 3.0
    """Gaussian sigma (px) of the local standard deviation for ``fit_flat``."""
    flat_bins: int = 8
    min_fit_pixels: int = 20
    """A fit is made from more than this many pixels: with fewer at ``fit_core`` the image's fit
    takes every ``fit_min`` pixel, with fewer at ``fit_min`` every pixel of the support, and the
    pooling over a lattice (``periodic_coverage()``) gives up."""
    min_explained: float = 0.5
    """A fit is trusted only if it explains this share of ``observed - b`` over its pixels (the
    image's fit over the image, a region's own fit over the region)."""
    sibling_explained: float = 0.87
    """Where the image's fit finds an opaque overlay (opacity above ``max_opacity``) that explains
    at least this share of the coverage, the covered pixels (coverage >= ``sibling_k``, in the
    support's regions, grouped as for the fits) that hold a stroke filled from the opacity head
    are filled too (> 1: never): thin letters the head misses beside the ones it fills. A thin
    margin: false detections on coins fit opaque overlays that explain almost as much."""
    sibling_k: float = 0.3
    head_explained: float = 0.75
    """Where the image's fit lands above ``max_opacity``, the opacity is taken from the network's
    opacity head instead (its median over the ``fit_core`` pixels), the colour fitted for it,
    and that is used if it explains at least this share (> 1: never). A fit's opacity and
    colour cannot be told apart where the photo under the overlay is flat, and the free fit
    lands near 1 (grey and textured photos); the head sees the opacity from the glyphs'
    surroundings. False detections explain up to about 0.7 this way."""
    judge_power: float = 1.0
    """Where no opaque stroke was found (a watermark, not a caption), the share of the overlay
    the image's fit explains, as the gates judge it (against ``min_explained`` and
    ``head_explained``; the share reported and compared in the lattice check stays
    unweighted), weights each covered pixel by its coverage to this power (0: every pixel
    alike). The network covers a faint watermark's glyphs fully but also photo edges at low
    coverage; those edges, unexplained, would pull the share under ``min_explained`` and the
    whole watermark would be left. Where opaque strokes were found (captions, logos), what is
    left of the coverage is outlines and edges beside them, and the weighting would let
    white fits through on outlined captions: not used there."""
    fill_at: float = 0.8
    """``a k`` from which a pixel is inpainted rather than unmixed."""
    net_fill: float = 0.4
    """Inpaint where the network's own opacity head reaches this (> 1: never), in regions of
    that head's hysteresis support ``alpha_low`` / ``alpha_high``."""
    alpha_low: float = 0.1
    alpha_high: float = 0.3
    core: float = 0.95
    """An opaque region is filled only if the opacity head is sure somewhere in it: at least
    ``core_pixels`` pixels at ``core`` or above (real strokes have a solid core; most false
    detections on photo texture do not - they were the main damage on the held-out pairs)."""
    core_pixels: int = 4
    core_share: float = 0.1
    """A filled region (the filled pixels grouped as for the fits, ``group``, before the
    semi-transparency check) is left unfilled unless at least this share of its pixels reach
    ``core_share_level`` on the opacity head (0: no such check, the setting until 2026-11-28):
    a few sure pixels (``core_pixels``) pass a false detection on a facade whose head reaches
    0.74 at its 90th percentile (held-out draw 14, Urban100 img_061: no mark under it, the fill
    took its 1,098 pixels' squared error from 3,356 to 13,115); every other filled region of
    held-out draws 7-16 and scikit-image 7-9 (431) has a tenth of its pixels at 0.83 or more."""
    core_share_level: float = 0.8
    bar_aspect: float = 7.0
    """An opaque region that is a straight thin bar (its minimum-area rectangle at least this
    many times longer than wide, at most ``bar_width`` px wide, at least half filled) is not
    filled: window frames, poles and wires, not glyphs (0: off)."""
    bar_width: float = 8.0
    glow: float = 0.08
    """An opaque region whose surroundings fall off towards it is not filled (0: off): where the
    region is near white (median lightness at least ``glow_level``, 0..1: a clipped highlight),
    its lightness is above the photo's ``glow_far`` px away by at least ``glow_contrast``, and
    the median lightness 2, 3 and 4 px outside it steps monotonically from the region's level
    to that far one, on average at least this share of the way (an overlay's
    edge is a step: 1-2 px of anti-aliasing, then the photo, whatever it is; a specular
    highlight or a lamp fades into its photo: the astronaut's helmet reflection, 0.10) - if the
    region is also a solid blob, not glyphs: at least ``glow_solidity`` of its convex hull
    and ``2 glow_radius`` px thick somewhere. Captions the opacity head fills lean as much
    (0.05-0.41 on held-out draws 7, 8, 9, 13 and scikit-image 7: their outlines, and the
    head's mask narrower than the letters), but as strokes (solidity 0.47-0.79, thickness up to
    12 px) or whole outlined lines (solidity 0.65). A light-grey badge logo (held-out draw 12,
    solidity 0.98, lightness 0.86) leans 0.07 from the grass's texture: kept filled."""
    glow_level: float = 0.95
    glow_contrast: float = 0.25
    glow_far: int = 8
    glow_solidity: float = 0.85
    glow_radius: float = 6.5
    semi_opacity: float = 0.7
    """A filled region (the filled pixels grouped as for the fits, ``group``) is unmixed instead
    where the opacity head's median over it and the opacity fitted for it against its own fill
    (``observed - fill = k a (c - fill)``) are both below this (0: never): both see a
    semi-transparent mark, whose photo still shows through and is recovered exactly, where a fill
    can come out further from the photo than the mark it removes (0: the setting until
    2026-11-28)."""
    semi_explained: float = 0.35
    """... where that fit explains at least this share of ``observed - fill`` (a fit of an
    opaque stroke over texture explains little and lands anywhere) ..."""
    semi_agree: float = 0.1
    """... and where the two opacities differ by at most this: a fit that lands well under the
    head's opacity is a dark mark over dark photo (or the reverse), whose opacity and colour
    trade off, and unmixed with it the mark comes back brighter than the photo."""
    semi_gamut: float = 0.02
    """Pixels of such a region whose unmixed colour leaves 0..1 by more than this (and those
    within 2 px of them) are kept as they are instead: the coverage is wrong there (a photo edge the
    network took for the mark), and unmixed they come out in saturated colours."""
    exclude_opaque: bool = True
    """Keep the pixels filled from the opacity head (and their neighbours) out of the fits."""
    max_opacity: float = 0.7
    """The image's fit is used only up to this opacity: a fitted opacity near 1 means an opaque
    overlay, left to the opacity head (unmixing it would amplify every error 1 / (1 - a k)).
    Semi-transparent watermarks fit below it; false detections on bright photo content (grey
    photos, coins, brick, a clock face) mostly above."""
    max_cover: float = 0.2
    """The image's fit is used only if the coverage's support is at most this share of the
    image, unless the coverage repeats on a lattice (a tiled watermark): one caption,
    watermark or logo covers a few per cent, false detections on texture (grass, a stained
    tissue section) more."""
    min_confident: float = 0.3
    """The image's fit is used only if at least this share of the coverage's support reaches
    ``high``, unless the coverage repeats on a lattice: the network covers glyphs with
    confidence, while its false detections on photo content are diffuse."""
    halo: int = 1
    """Pixels of the coverage's support within this many pixels of the opaque strokes filled from
    the opacity head, and left unchanged by the fits, are filled too: a caption's anti-aliased
    edge, outline and drop shadow, which the opacity head does not claim and a gated fit leaves
    as ghost text (0: off; wider halos fill photo beside the letters)."""
    halo_alpha: float = 0.75
    """... around the filled regions where the opacity head averages at least this (0: all):
    real opaque strokes average more, the semi-transparent logos the head takes for opaque
    less, and a halo there widens a fill that already costs more than the logo it removes."""
    halo_dev: float = 0.06
    """... and only those that differ from the photo estimated around the overlay (``background``)
    by more than this (0..1, largest channel): outline and shadow pixels do, the photo's own
    pixels beside a glyph mostly do not."""
    group: int = 6
    """Covered pixels closer than about this many pixels form one region."""
    fit_pixels: int = 40_000
    """At most about this many pixels enter the fits (a regular subsample above)."""
    max_cap: float = 0.95
    """``a k`` is capped here when unmixing (1 / (1 - a k) amplifies noise)."""
    telea_radius: int = 3
    background_radius: int = 5
    background: str = "nconv"
    """How the photo under the overlay is estimated for the fits: see ``background()``."""
    sigma: float = 4.0
    lattice: bool = True
    """Periodic consensus for tiled watermarks (``lattice.py``, ``periodic_coverage()``)."""
    lattice_score: float = 0.125
    """The lattice's weakest basic autocorrelation peak must reach this (``lattice.find``):
    weaker lattices found on watermarks changed nothing or made the pair worse, and captions'
    false lattices score below it."""
    lattice_highpass: float = 3.0
    """Gaussian sigma (px at half resolution) of the high-pass before the autocorrelation."""
    lattice_tolerance: int = 1
    """Each combination of the basis is read as the best value within this many pixels (at half
    resolution) of its rounded lag (``lattice.find``; 0: the rounded lag alone)."""
    lattice_far_overlap: float = 0.5
    """Doubled basis vectors are checked only at lags where the image overlaps itself by this
    share (``lattice.find``; 0: always). With ``lattice_tolerance`` it lets tiles a third of
    the image wide through."""
    lattice_candidates: int = 3
    """The shortest strong autocorrelation peaks tried as each basis vector, in order, until a
    basis passes (``lattice.find``; 1: the shortest alone)."""
    lattice_alt_score: float = 0.15
    """... where a basis other than the shortest must reach this: above the false lattices
    found on captions, below those of tiled watermarks."""
    lattice_reach: int = 2
    """Translates ``n v1 + m v2`` with ``|n|, |m| <=`` this are pooled."""
    lattice_support: float = 0.5
    """Consensus coverage (normalised) from which a pixel is taken as watermark for the first
    background estimate ..."""
    lattice_support2: float = 0.5
    """... and pooled coverage from which for the next ones."""
    lattice_iters: int = 2
    lattice_check: bool = True
    """A lattice is used only if the fit on the pooled coverage explains the overlay better than
    a fit on the network's own coverage (when that one passes the gates)."""


@dataclass
class Outcome:
    image: U8
    opacity: Float  # a k per pixel (0 where unchanged)
    unmixed: Mask
    filled: Mask
    image_fit: tuple[float, list[float], float] | None = None  # (a, colour, explained)
    full_fit: tuple[float, list[float], float] | None = None
    """The image's fit over every confident pixel, as the lattice check judges it: ``image_fit``
    before the refit where the photo is flattest (``Settings.fit_flat``)."""
    regions: int = 0
    kept: int = 0
    lattice: lattice.Lattice | None = None
    notes: list[str] = field(default_factory=list)


def support(k: Float, low: float, high: float) -> Mask:
    """Hysteresis: pixels with ``k >= low`` connected (8-) to a pixel with ``k >= high``."""
    n, labels = cv2.connectedComponents((k >= low).astype(np.uint8), connectivity=8)
    strong = np.zeros(n, bool)
    strong[np.unique(labels[k >= high])] = True
    strong[0] = False
    return np.asarray(strong[labels], dtype=np.bool_)


def background(
    obs8: U8, mask: Mask, radius: int = 5, grow: int = 2, mode: str = "telea", sigma: float = 4.0
) -> Float:
    """The photo under ``mask`` (grown by ``grow`` px) estimated from the pixels around it, as
    float 0..1: Telea inpainting (``telea``), or a normalised Gaussian convolution of the unmasked
    pixels (``nconv``, repeated with a 3x wider Gaussian where the first leaves holes): as good
    for the fits on the held-out pairs and 3-10x faster."""
    m = mask.astype(np.uint8)
    if grow:
        m = np.asarray(cv2.dilate(m, np.ones((2 * grow + 1, 2 * grow + 1), np.uint8)), np.uint8)
    obs = np.asarray(obs8, np.float32) * np.float32(1.0 / 255.0)
    if not m.any():
        return obs
    if mode == "telea":
        b = cv2.inpaint(obs8, m * 255, radius, cv2.INPAINT_TELEA)
        return np.asarray(b, np.float32) * np.float32(1.0 / 255.0)
    return _spread(obs, m > 0, sigma)


def _spread(values: Float, hole: Mask, sigma: float) -> Float:
    """``values`` (H, W, C) with the pixels of ``hole`` replaced by a normalised Gaussian
    convolution of the others (repeated with a 3x wider Gaussian where the first leaves holes)."""
    valid = (~hole).astype(np.float32)
    out = values.copy()
    todo = hole.copy()
    s = sigma
    for _ in range(4):
        num = cv2.GaussianBlur(values * valid[..., None], (0, 0), s)
        den = cv2.GaussianBlur(valid, (0, 0), s)
        if num.ndim == 2:  # OpenCV drops a single channel
            num = num[..., None]
        ok = todo & (den > 1e-3)
        out[ok] = num[ok] / den[ok][:, None]
        todo &= ~ok
        if not todo.any():
            break
        s *= 3
    return out


def local_std(obs8: U8, mask: Mask, st: Settings) -> Float:
    """The standard deviation of lightness (0..1) around each pixel (Gaussian window
    ``st.flat_sigma``), measured on the photo outside ``mask`` (grown by 2 px) and spread into
    it as ``background()`` spreads the photo: how textured the photo around an overlay is
    (``Settings.fit_flat``)."""
    light = np.asarray(obs8, np.float32).mean(axis=2) * np.float32(1.0 / 255.0)
    mean = cv2.GaussianBlur(light, (0, 0), st.flat_sigma)
    sq = cv2.GaussianBlur(light * light, (0, 0), st.flat_sigma)
    std = np.sqrt(np.maximum(sq - mean * mean, 0.0)).astype(np.float32)
    hole = cv2.dilate(mask.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    return _spread(std[..., None], hole, st.sigma)[..., 0]


def _flattest(core: Mask, rough: Float, light: F64, st: Settings) -> Mask:
    """The ``st.fit_flat`` share of ``core`` where ``rough`` is lowest, taken alike from
    ``st.flat_bins`` bands of the background's lightness ``light`` (the fit needs the range of
    backgrounds under the overlay to tell its opacity from its colour); ``core`` itself if that
    is too few pixels to fit."""
    idx = np.flatnonzero(core)
    if round(st.fit_flat * idx.size) <= st.min_fit_pixels:
        return core
    out = np.zeros_like(core)
    edges = np.quantile(light[idx], np.linspace(0.0, 1.0, st.flat_bins + 1)[1:-1])
    band = np.searchsorted(edges, light[idx])
    for b in range(st.flat_bins):
        part = idx[band == b]
        keep = round(st.fit_flat * part.size)
        out[part[np.argsort(rough[part], kind="stable")[:keep]]] = True
    return np.asarray(out, dtype=np.bool_)


def _solve(
    y: F64, k: F64, b: F64, w: F64, lab: npt.NDArray[np.intp], n: int, a_max: float
) -> tuple[F64, F64]:
    """Weighted normal equations of ``y = k (p - a b)`` (p = a c) per label: (a (n,), c (n, 3)).

    ``y``, ``b``, ``w``: (m, 3); ``k``: (m,); ``lab``: (m,) in 0..n-1."""
    ata = np.zeros((n, 4, 4))
    aty = np.zeros((n, 4))
    k2 = k * k
    for ch in range(3):
        wk2 = w[:, ch] * k2
        s_k2 = np.bincount(lab, wk2, n)
        s_k2b = np.bincount(lab, wk2 * b[:, ch], n)
        ata[:, ch, ch] = s_k2
        ata[:, ch, 3] = -s_k2b
        ata[:, 3, ch] = -s_k2b
        ata[:, 3, 3] += np.bincount(lab, wk2 * b[:, ch] ** 2, n)
        wky = w[:, ch] * k * y[:, ch]
        aty[:, ch] = np.bincount(lab, wky, n)
        aty[:, 3] -= np.bincount(lab, wky * b[:, ch], n)
    ata += np.eye(4)[None] * 1e-6
    x = np.linalg.solve(ata, aty[..., None])[..., 0]
    a = np.clip(x[:, 3], 1e-3, a_max)
    c = np.clip(x[:, :3] / a[:, None], 0.0, 1.0)
    # The opacity again, with the colour clipped to 0..1.
    d = k[:, None] * (c[lab] - b)
    num = np.bincount(lab, (w * d * y).sum(1), n)
    den = np.bincount(lab, (w * d * d).sum(1), n) + 1e-9
    return np.clip(num / den, 0.0, a_max), c


def _explained(
    y: F64,
    k: F64,
    b: F64,
    a: F64,
    c: F64,
    lab: npt.NDArray[np.intp],
    n: int,
    power: float = 0.0,
) -> F64:
    """The share of ``y`` the fit (a, c) explains per label, each pixel weighted by
    ``k ** power`` (``Settings.judge_power``)."""
    res = y - a[lab, None] * k[:, None] * (c[lab] - b)
    w = k**power if power else np.ones_like(k)
    e0 = np.bincount(lab, w * (y * y).sum(1), n) + 1e-9
    return np.asarray(1.0 - np.bincount(lab, w * (res * res).sum(1), n) / e0, np.float64)


def fit(
    y: F64,
    k: F64,
    b: F64,
    lab: npt.NDArray[np.intp],
    n: int,
    iters: int = 6,
    huber: float = 1.5,
    a_max: float = 1.0,
) -> tuple[F64, F64, F64]:
    """IRLS (Huber) fit per label: opacity (n,), colour (n, 3), share explained (n,)."""
    w = np.ones_like(y)
    a, c = _solve(y, k, b, w, lab, n, a_max)
    for _ in range(iters - 1):
        r = np.abs(y - a[lab, None] * k[:, None] * (c[lab] - b))
        scale = 1.4826 * float(np.median(r)) + 1e-4
        w = np.minimum(1.0, huber * scale / np.maximum(r, 1e-12))
        a, c = _solve(y, k, b, w, lab, n, a_max)
    return a, c, _explained(y, k, b, a, c, lab, n)


def _colour_for(y: F64, k: F64, b: F64, a: float) -> F64:
    """The least-squares colour (1, 3) of ``y = k a (c - b)`` for a given opacity ``a``."""
    c = (k[:, None] * (y + a * k[:, None] * b)).sum(0) / (a * float((k * k).sum()) + 1e-9)
    return np.asarray(np.clip(c, 0.0, 1.0)[None, :], np.float64)


def cored(regions: Mask, core: Mask, at_least: int) -> Mask:
    """The connected parts of ``regions`` with at least ``at_least`` ``core`` pixels."""
    n, labels = cv2.connectedComponents(regions.astype(np.uint8), connectivity=8)
    counts = np.bincount(labels[core & regions], minlength=n)
    keep = counts >= at_least
    keep[0] = False
    return np.asarray(keep[labels], dtype=np.bool_)


def find_lattice(k: Float, st: Settings) -> lattice.Lattice | None:
    """``lattice.find`` on the coverage ``k`` with the lattice settings of ``st``."""
    return lattice.find(
        k,
        min_score=st.lattice_score,
        highpass=st.lattice_highpass,
        tolerance=st.lattice_tolerance,
        far_overlap=st.lattice_far_overlap,
        candidates=st.lattice_candidates,
        alt_score=st.lattice_alt_score,
    )


def periodic_coverage(obs8: U8, obs: Float, k: Float, lat: lattice.Lattice, st: Settings) -> Float:
    """The coverage of a tiled watermark pooled over its lattice ``lat``.

    The watermark is the same at ``p`` and at every translate ``p + t``, the photo is not: with
    the photo ``b`` estimated around the watermark (``background()``) and one opacity / colour
    fitted (``fit()``), each translate gives ``y_t = obs(p + t) - b(p + t) = k(p) d_t`` with
    ``d_t = a (c - b(p + t))``, and ``k(p)`` is their least-squares solution
    ``sum_t y_t . d_t / sum_t |d_t|^2``. Translates where the watermark is invisible (``c`` close
    to the photo) weigh little, so a copy the network missed on similar-coloured content is
    recovered from the copies it found elsewhere; photo edges that do not repeat are averaged
    out. Starts from the network's coverage averaged over the lattice (``lattice.consensus``).
    ``obs`` is ``obs8`` scaled to 0..1."""
    moves = lattice.translates(lat, st.lattice_reach, *k.shape)
    kc = lattice.consensus(k, lat, st.lattice_reach)
    top = float(np.quantile(kc, 0.995))
    if top <= 1e-3:
        return k
    kk = np.asarray(np.clip(kc / top, 0.0, 1.0), np.float32)
    thr = st.lattice_support
    for _ in range(st.lattice_iters):
        b = background(obs8, kk > thr, st.background_radius, mode=st.background, sigma=st.sigma)
        y = obs - b
        ys, xs = np.nonzero(kk >= st.fit_min)
        if ys.size <= st.min_fit_pixels:
            return k
        step = -(-ys.size // st.fit_pixels)
        ys, xs = ys[::step], xs[::step]
        zero = np.zeros(ys.size, np.intp)
        a, c, _ = fit(
            y[ys, xs].astype(np.float64),
            kk[ys, xs].astype(np.float64),
            b[ys, xs].astype(np.float64),
            zero,
            1,
        )
        d = (float(a[0]) * (c[0].astype(np.float32)[None, None, :] - b)).astype(np.float32)
        num = lattice.shift_sum(np.ascontiguousarray((y * d).sum(2), np.float32), moves)
        den = lattice.shift_sum(np.ascontiguousarray((d * d).sum(2), np.float32), moves)
        kk = np.asarray(np.clip(num / np.maximum(den, 1e-4), 0.0, 1.0), np.float32)
        thr = st.lattice_support2
    return kk


def without_bars(regions: Mask, aspect: float, width: float) -> Mask:
    """``regions`` less its connected parts that are straight thin bars (see
    ``Settings.bar_aspect``)."""
    m = regions.astype(np.uint8)
    contours, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    out = m.copy()
    for cnt in contours:
        (_, _), (rw, rh), _ = cv2.minAreaRect(cnt)
        long_side, short_side = max(rw, rh) + 1.0, min(rw, rh) + 1.0
        if long_side < aspect * short_side or short_side > width:
            continue
        blob = np.zeros_like(m)
        cv2.drawContours(blob, [cnt], -1, 1, thickness=-1)
        if int((blob & m).sum()) >= 0.5 * long_side * short_side:
            out[blob > 0] = 0
    return np.asarray(out > 0, dtype=np.bool_)


def glow_share(obs8: U8, region: Mask, st: Settings, others: Mask | None = None) -> float:
    """How far, as a share of the region's contrast with the photo ``st.glow_far`` px away, the
    photo 2-4 px outside ``region`` (one connected region) leans towards the region's lightness;
    0 unless the region is near white (``st.glow_level``), brighter than that photo by
    ``st.glow_contrast`` and the lean falls off monotonically (see ``Settings.glow``). Pixels
    of ``others`` (the other opaque regions and their anti-aliased edges) are not counted as
    photo."""
    ys, xs = np.nonzero(region)
    h, w = region.shape
    m = st.glow_far + 3
    y0, y1 = max(0, ys.min() - m), min(h, ys.max() + m + 1)
    x0, x1 = max(0, xs.min() - m), min(w, xs.max() + m + 1)
    light = obs8[y0:y1, x0:x1].astype(np.float32).mean(axis=2) * np.float32(1.0 / 255.0)
    dist = cv2.distanceTransform((~region[y0:y1, x0:x1]).astype(np.uint8), cv2.DIST_L2, 3)
    photo = ~others[y0:y1, x0:x1] if others is not None else np.ones_like(dist, dtype=bool)
    rings = [(dist > r - 0.5) & (dist <= r + 0.5) & photo for r in (2, 3, 4)]
    far = (dist > st.glow_far - 2.5) & (dist <= st.glow_far + 2.5) & photo
    if not far.any() or not all(r.any() for r in rings):
        return 0.0
    inside = float(np.median(light[region[y0:y1, x0:x1]]))
    if inside < st.glow_level:
        return 0.0
    level = float(np.median(light[far]))
    contrast = inside - level
    if contrast < st.glow_contrast:
        return 0.0
    lean = [(float(np.median(light[r])) - level) / contrast for r in rings]
    if not 1.0 > lean[0] > lean[1] > lean[2] > 0.0:
        return 0.0
    return float(np.mean(lean))


def solid_blob(part: Mask, solidity: float, radius: float) -> bool:
    """Whether ``part`` (one connected region) covers at least ``solidity`` of its convex hull
    (the hull's area plus half its perimeter: pixels, not a polygon's inside) and is ``2 radius``
    px thick somewhere."""
    m = part.astype(np.uint8)
    if float(cv2.distanceTransform(m, cv2.DIST_L2, 3).max()) < radius:
        return False
    contours, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    hull = cv2.convexHull(np.concatenate(contours))
    area = float(cv2.contourArea(hull)) + 0.5 * float(cv2.arcLength(hull, True)) + 1.0
    return float(part.sum()) >= solidity * area


def without_glows(obs8: U8, regions: Mask, st: Settings) -> Mask:
    """``regions`` less its connected parts that are solid blobs whose surroundings fall off
    towards them (see ``Settings.glow``): the photo's highlights, not overlays."""
    n, labels = cv2.connectedComponents(regions.astype(np.uint8), connectivity=8)
    out = regions.copy()
    for i in range(1, n):
        part = labels == i
        if not solid_blob(part, st.glow_solidity, st.glow_radius):
            continue
        rest = cv2.dilate((regions & ~part).astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
        if glow_share(obs8, part, st, rest) >= st.glow:
            out &= ~part
    return np.asarray(out, dtype=np.bool_)


Inpaint = Callable[[U8, Mask, int], U8]
"""Fills the pixels of a mask in an RGB uint8 image (given the Telea radius): ``inpaint.py``."""


def _fill(
    img: U8, filled: Mask, radius: int, fill_rgb: Float | None, inpaint: Inpaint | None
) -> U8:
    if not filled.any():
        return img
    if fill_rgb is not None:
        head = np.clip(np.rint(fill_rgb * 255.0), 0, 255).astype(np.uint8)
        return np.where(filled[..., None], head, img)
    if inpaint is not None:
        return inpaint(img, filled, radius)
    mask = filled.astype(np.uint8) * 255
    return np.asarray(cv2.inpaint(img, mask, radius, cv2.INPAINT_TELEA), np.uint8)


def restore(
    obs8: U8,
    k: Float,
    alpha: Float | None = None,
    settings: Settings | None = None,
    extra_fill: Mask | None = None,
    fill_rgb: Float | None = None,
    inpaint: Inpaint | None = None,
) -> Outcome:
    """Remove the overlay of coverage ``k`` from ``obs8`` (H, W, 3 uint8); see the module
    docstring. ``alpha``: the network's own per-pixel opacity head (opaque strokes:
    ``Settings.net_fill``); ``extra_fill``: more pixels
    to inpaint (e.g. OCR strokes); ``fill_rgb``: colours (0..1) to put in the pixels to fill
    instead of Telea inpainting; ``inpaint``: what fills them instead of Telea alone (the
    learned inpainter)."""
    st = settings or Settings()
    h, w = k.shape
    obs = obs8.astype(np.float32) * np.float32(1.0 / 255.0)
    none = np.zeros((h, w), bool)
    opaque = none.copy()
    a_sup = none
    if alpha is not None and st.net_fill <= 1.0:
        a_sup = support(alpha, st.alpha_low, st.alpha_high)
        opaque = a_sup & (alpha >= st.net_fill)
        if st.core < 1.0 and opaque.any():
            opaque = cored(opaque, alpha >= st.core, st.core_pixels)
        if st.bar_aspect > 0 and opaque.any():
            opaque = without_bars(opaque, st.bar_aspect, st.bar_width)
        if st.glow > 0 and opaque.any():
            opaque = without_glows(obs8, opaque, st)
    lat = find_lattice(k, st) if st.lattice else None
    raw = k
    if lat is not None:
        k = periodic_coverage(obs8, obs, k, lat, st)
    ak, cmap, out = _place(obs8, obs, k, opaque, lat, st, alpha)
    if lat is not None and st.lattice_check:
        # the lattice must earn its place: a wrong period pools glyphs with photo and spoils a
        # fit the network's own coverage would have given (both judged on their fits over all
        # the covered pixels, see Settings.fit_flat)
        ak2, cmap2, out2 = _place(obs8, obs, raw, opaque, None, st, alpha)
        pooled, own = _usable(out.full_fit, st), _usable(out2.full_fit, st)
        if own > pooled:
            out2.notes.insert(
                0,
                f"a lattice was found but explained the overlay less well ({pooled:.2f}) than "
                f"the network's own coverage ({own:.2f}): not used",
            )
            ak, cmap, out, k = ak2, cmap2, out2, raw
    # the coverage's support, for the fills beside the opaque strokes (siblings, halo)
    k_sup = support(k, st.low, st.high) if opaque.any() else none
    if st.sibling_explained <= 1.0 and opaque.any() and out.image_fit is not None:
        a_fit, _, explained = out.image_fit
        if a_fit > st.max_opacity and explained >= st.sibling_explained:
            more = _siblings(k_sup, k, ak, opaque, st)
            if more.any():
                out.notes.append(
                    f"an opaque overlay (fitted opacity {a_fit:.2f}, explaining {explained:.2f}):"
                    f" {int(more.sum())} covered pixels beside the strokes the opacity head fills"
                    " are filled too"
                )
                opaque = opaque | more
    t = np.minimum(ak, st.max_cap)[..., None]
    clean = np.where(t > 0, (obs - t * cmap) / (1.0 - t), obs)
    img = np.clip(np.rint(clean * 255.0), 0, 255).astype(np.uint8)
    filled = (ak >= st.fill_at) | opaque
    if st.halo and opaque.any():
        filled |= _halo(obs8, opaque, alpha, k_sup, ak, st)
    if st.core_share > 0 and alpha is not None and filled.any():
        unsure = _unsure(filled, alpha, st)
        if unsure.any():
            out.notes.append(
                f"{int(unsure.sum())} pixels to fill lie in regions where under "
                f"{st.core_share:.0%} of the opacity head reaches {st.core_share_level}: "
                "left unfilled"
            )
            filled &= ~unsure
    if extra_fill is not None:
        filled |= extra_fill
    out.image = np.ascontiguousarray(_fill(img, filled, st.telea_radius, fill_rgb, inpaint))
    if st.semi_opacity > 0 and alpha is not None and filled.any():
        semi = _semi_transparent(obs, out.image, k, alpha, filled, st)
        if semi is not None:
            mask, ak_semi, c_semi, notes = semi
            t = np.minimum(ak_semi, st.max_cap)[..., None]
            plain = (obs - t * c_semi) / (1.0 - t)
            # where the unmixed colour leaves the gamut the coverage is wrong there (a photo
            # edge the network took for the mark): those pixels, and their neighbours, are kept
            off = ((plain < -st.semi_gamut) | (plain > 1.0 + st.semi_gamut)).any(axis=2) & mask
            off = (cv2.dilate(off.view(np.uint8), np.ones((5, 5), np.uint8)) > 0) & mask
            unmixed = np.clip(np.rint(plain * 255.0), 0, 255).astype(np.uint8)
            unmixed[off] = obs8[off]
            out.image = np.ascontiguousarray(np.where(mask[..., None], unmixed, out.image))
            ak = np.where(mask & ~off, ak_semi, ak).astype(np.float32)
            filled = filled & ~mask
            out.notes.extend(notes)
    out.opacity = ak
    out.unmixed = (out.unmixed | (ak > 0)) & ~filled
    out.filled = filled
    return out


def _groups(mask: Mask, group: int) -> tuple[int, npt.NDArray[np.int32]]:
    """The regions of ``mask`` with pixels closer than about ``group`` px joined (``Settings
    .group``): their count (label 0 the rest) and labels, as the fits and fills group them."""
    size = 2 * group + 1
    grown = cv2.dilate(mask.astype(np.uint8), np.ones((size, size), np.uint8))
    n, labels = cv2.connectedComponents(grown, connectivity=8)
    return int(n), np.asarray(labels, np.int32)


def _unsure(filled: Mask, alpha: Float, st: Settings) -> Mask:
    """The pixels of ``filled`` in regions (grouped as for the fits) where under
    ``st.core_share`` of the pixels reach ``st.core_share_level`` on the opacity head
    ``alpha``."""
    n, labels = _groups(filled, st.group)
    lab = np.where(filled, labels, 0).ravel()
    counts = np.bincount(lab, minlength=n)
    sure = np.bincount(lab, weights=(alpha >= st.core_share_level).ravel(), minlength=n)
    weak = sure < st.core_share * counts
    weak[0] = False
    return np.asarray(filled & weak[labels], dtype=np.bool_)


def _semi_transparent(
    obs: Float, filled_img: U8, k: Float, alpha: Float, filled: Mask, st: Settings
) -> tuple[Mask, Float, Float, list[str]] | None:
    """The filled regions to unmix instead (``Settings.semi_opacity``): their pixels, ``a k`` and
    the colour there, and a note for each; None if there are none."""
    n, labels = _groups(filled, st.group)
    ys, xs = np.nonzero(filled)
    lab = labels[ys, xs].astype(np.intp)
    counts = np.bincount(lab, minlength=n)
    head = np.zeros(n)
    for i in np.flatnonzero(counts):  # the opacity head's median per region
        head[i] = float(np.median(alpha[ys, xs][lab == i]))
    cand = (counts > st.min_fit_pixels) & (head < st.semi_opacity)
    cand[0] = False
    if not cand.any():
        return None
    sel = cand[lab]
    ys, xs, lab = ys[sel], xs[sel], lab[sel]
    fill = filled_img[ys, xs].astype(np.float64) / 255.0
    kk = np.clip(k[ys, xs], 0.0, 1.0).astype(np.float64)
    a, c, e = fit(obs[ys, xs].astype(np.float64) - fill, kk, fill, lab, n)
    ok = (
        cand
        & (a < st.semi_opacity)
        & (e >= st.semi_explained)
        & (np.abs(a - head) <= st.semi_agree)
    )
    if not ok.any():
        return None
    h, w = filled.shape
    mask = np.zeros((h, w), bool)
    ak = np.zeros((h, w), np.float32)
    cmap = np.zeros((h, w, 3), np.float32)
    use = ok[lab]
    mask[ys[use], xs[use]] = True
    ak[ys[use], xs[use]] = (a[lab[use]] * kk[use]).astype(np.float32)
    cmap[ys[use], xs[use]] = c[lab[use]].astype(np.float32)
    notes = [
        f"a filled region of {int(counts[i])} pixels is semi-transparent (opacity head "
        f"{head[i]:.2f}, fitted against its fill {a[i]:.2f}, explaining {e[i]:.2f}): unmixed "
        "instead"
        for i in np.flatnonzero(ok)
    ]
    return mask, ak, cmap, notes


def _siblings(s: Mask, k: Float, ak: Float, opaque: Mask, st: Settings) -> Mask:
    """The pixels of the support ``s`` (coverage ``k`` >= ``st.sibling_k``, not unmixed) in
    regions, grouped as for the fits, that hold a pixel of ``opaque``."""
    sup = s & (ak <= 0)
    n, labels = _groups(sup | opaque, st.group)
    holds = np.zeros(n, bool)
    holds[np.unique(labels[opaque])] = True
    holds[0] = False
    return np.asarray(sup & holds[labels] & (k >= st.sibling_k), dtype=np.bool_)


def _usable(image_fit: tuple[float, list[float], float] | None, st: Settings) -> float:
    """How much of the overlay the image's fit explains, 0 if the fit would not be used."""
    if image_fit is None:
        return 0.0
    a, _, explained = image_fit
    return explained if _passes(a, explained, st) else 0.0


def _passes(a: float, explained: float, st: Settings) -> bool:
    """Whether an image fit of opacity ``a`` explaining ``explained`` (as the gates judge it)
    passes the gates: it explains enough, at an overlay's opacity."""
    return explained >= st.min_explained and a <= st.max_opacity


def _place(
    obs8: U8,
    obs: Float,
    k: Float,
    opaque: Mask,
    lat: lattice.Lattice | None,
    st: Settings,
    alpha: Float | None = None,
) -> tuple[Float, Float, Outcome]:
    """``a k`` and the overlay colour per pixel from the coverage ``k`` (zero where nothing is
    unmixed), after the gates, and the outcome so far."""
    h, w = k.shape
    s = support(k, st.low, st.high)
    if st.exclude_opaque and opaque.any():
        near = cv2.dilate(opaque.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
        s &= ~near
    ak = np.zeros((h, w), np.float32)
    cmap = np.zeros((h, w, 3), np.float32)
    none = np.zeros((h, w), bool)
    out = Outcome(obs8, ak, none, none, lattice=lat)  # restore() sets the image
    share = float(s.mean())
    confident = float((k[s] >= st.high).mean()) if share > 0 and lat is None else 1.0
    if share > st.max_cover and lat is None:
        out.notes.append(
            f"coverage on {100 * share:.0f} % of the image and no lattice: "
            "photo texture, not an overlay; nothing unmixed"
        )
    elif confident < st.min_confident:
        out.notes.append(
            f"only {100 * confident:.0f} % of the coverage is confident and no lattice: "
            "photo content, not an overlay; nothing unmixed"
        )
    elif share > 0:
        _fit_and_place(obs8, obs, k, s, st, ak, cmap, out, alpha, bool(opaque.any()))
    return ak, cmap, out


def _halo(obs8: U8, opaque: Mask, alpha: Float | None, s: Mask, ak: Float, st: Settings) -> Mask:
    """The support's pixels within ``st.halo`` pixels of the regions of ``opaque`` where the
    opacity head ``alpha`` is sure on average (``st.halo_alpha``), in regions of the support that
    touch them, that no fit changed and that differ from the photo around them. Worked out in
    the box around ``opaque`` (with a margin for the photo's estimate)."""
    out = np.zeros_like(opaque)
    ys, xs = np.nonzero(opaque)
    h, w = opaque.shape
    m = st.halo + 3 * st.background_radius + 4 * int(st.sigma)
    box = np.s_[
        max(0, ys.min() - m) : min(h, ys.max() + m + 1),
        max(0, xs.min() - m) : min(w, xs.max() + m + 1),
    ]
    op, sup = opaque[box], s[box]
    sure = op
    if st.halo_alpha > 0 and alpha is not None:
        n, labels = cv2.connectedComponents(op.astype(np.uint8), connectivity=8)
        a = alpha[box]
        mean = np.bincount(labels.ravel(), a.ravel(), n) / np.maximum(
            np.bincount(labels.ravel(), None, n), 1
        )
        ok = mean >= st.halo_alpha
        ok[0] = False
        sure = np.asarray(ok[labels], dtype=np.bool_)
        if not sure.any():
            return out
    near = cv2.distanceTransform((~sure).astype(np.uint8), cv2.DIST_L2, 3) <= st.halo
    n, labels = cv2.connectedComponents((sup | sure).astype(np.uint8), connectivity=8)
    touching = np.zeros(n, bool)
    touching[np.unique(labels[sure])] = True
    touching[0] = False
    halo = near & sup & touching[labels] & (ak[box] <= 0) & ~op
    if st.halo_dev > 0 and halo.any():
        crop = np.ascontiguousarray(obs8[box])
        b = background(crop, halo | op, st.background_radius, mode=st.background, sigma=st.sigma)
        dev = np.abs(crop.astype(np.float32) * np.float32(1.0 / 255.0) - b).max(axis=2)
        halo &= dev > st.halo_dev
    out[box] = halo
    return out


def _fit_and_place(
    obs8: U8,
    obs: Float,
    k: Float,
    s: Mask,
    st: Settings,
    ak: Float,
    cmap: Float,
    out: Outcome,
    alpha: Float | None = None,
    has_opaque: bool = False,
) -> None:
    """Fit (a, c) on the support ``s`` and write ``a k`` and ``c`` into ``ak`` / ``cmap``
    (``has_opaque``: opaque strokes were found, see ``Settings.judge_power``)."""
    b = background(obs8, s, st.background_radius, mode=st.background, sigma=st.sigma)
    n, labels = _groups(s, st.group)
    ys, xs = np.nonzero(s)
    lab = labels[ys, xs].astype(np.intp)
    kk = k[ys, xs].astype(np.float64)
    bb = b[ys, xs].astype(np.float64)
    yy = obs[ys, xs].astype(np.float64) - bb
    sel = kk >= st.fit_min
    if int(sel.sum()) <= st.min_fit_pixels:
        sel = np.ones_like(sel)
    stride = 1
    if sel.sum() > st.fit_pixels:  # a regular subsample is plenty for four unknowns
        stride = -(-int(sel.sum()) // st.fit_pixels)
        keep_idx = np.flatnonzero(sel)[::stride]
        sel = np.zeros_like(sel)
        sel[keep_idx] = True
    # one fit for the whole image
    core = sel & (kk >= st.fit_core)
    if int(core.sum()) <= st.min_fit_pixels:
        core = sel
    zero = np.zeros(int(core.sum()), np.intp)
    ga, gc, _ = fit(yy[core], kk[core], bb[core], zero, 1)
    one = np.zeros(int(sel.sum()), np.intp)  # every fitted pixel in one label
    pw = 0.0 if has_opaque else st.judge_power  # see Settings.judge_power

    def judged(a: F64, c: F64) -> tuple[F64, float]:
        """The share explained (reported, and compared in the lattice check) and the share the
        gates judge (coverage-weighted where no opaque stroke was found)."""
        e = _explained(yy[sel], kk[sel], bb[sel], a, c, one, 1)
        return e, float((_explained(yy[sel], kk[sel], bb[sel], a, c, one, 1, pw) if pw else e)[0])

    ge, gj = judged(ga, gc)
    free = True  # the opacity is the free fit's, not the head's
    if alpha is not None and float(ga[0]) > st.max_opacity and st.head_explained <= 1.0:
        # opacity and colour cannot be told apart where the photo under the overlay is flat:
        # take the opacity the network's head sees and fit the colour for it
        ha = np.array([float(np.median(alpha[ys, xs][core]))])
        hc = _colour_for(yy[core], kk[core], bb[core], float(ha[0]))
        he, hj = judged(ha, hc)
        if hj >= st.head_explained and float(ha[0]) <= st.max_opacity:
            out.notes.append(
                f"the fit's opacity {float(ga[0]):.2f} is above {st.max_opacity}; the opacity "
                f"head's {float(ha[0]):.2f}, with the colour fitted for it, explains "
                f"{float(he[0]):.2f} of the overlay"
                + (f" ({hj:.2f} weighted by coverage)" if pw else "")
                + ": used"
            )
            ga, gc, ge, gj = ha, hc, he, hj
            free = False
    out.full_fit = (float(ga[0]), [float(v) for v in gc[0]], float(ge[0]))
    if _passes(float(ga[0]), gj, st) and free and st.fit_flat > 0 and not has_opaque:
        flat = _flattest(core, local_std(obs8, s, st)[ys, xs], bb.mean(axis=1), st)
        if flat.sum() < core.sum():
            zero = np.zeros(int(flat.sum()), np.intp)
            fa, fc, _ = fit(yy[flat], kk[flat], bb[flat], zero, 1)
            fe, fj = judged(fa, fc)
            if _passes(float(fa[0]), fj, st):
                out.notes.append(
                    f"fitted again where the photo around the overlay is flattest: opacity "
                    f"{float(ga[0]):.2f} -> {float(fa[0]):.2f}, explaining {float(fe[0]):.2f}"
                )
                ga, gc, ge, gj = fa, fc, fe, fj
    out.image_fit = (float(ga[0]), [float(v) for v in gc[0]], float(ge[0]))
    # how well the image's fit explains each region
    ra = np.full(n, ga[0])
    rc = np.repeat(gc, n, axis=0)
    re = _explained(yy[sel], kk[sel], bb[sel], ra, rc, lab[sel], n)
    counts = np.bincount(lab[sel], minlength=n)
    present = np.bincount(lab, minlength=n) > 0
    present[0] = False
    # regions without fitted pixels: judge them by the image's fit over all their pixels
    thin = present & (counts == 0)
    if thin.any():
        re[thin] = _explained(yy, kk, bb, ra, rc, lab, n)[thin]
    # A region is changed if the image's fit explains the image and does not make the region
    # worse (explains a negative share of it).
    image_ok = _passes(float(ga[0]), gj, st)
    if image_ok and float(ge[0]) < st.min_explained:
        out.notes.append(
            f"the fit explains {float(ge[0]):.2f} of the covered pixels, {gj:.2f} weighted by "
            "coverage (no opaque stroke: low coverage on photo edges counts less): used"
        )
    keep = (not image_ok) | (re < 0.0)
    out.regions = int(present.sum())
    out.kept = int((keep & present).sum())
    ra = np.where(keep, 0.0, ra)
    ak[ys, xs] = (ra[lab] * kk).astype(np.float32)
    cmap[ys, xs] = rc[lab].astype(np.float32)
