"""Benchmark text / watermark / logo removal on the outside corpus, both halves.

The corpus (``bench/corpora/text_overlays.py``, sources and licences in
``docs/corpora-text.md``): 30 source photos from scikit-image, matplotlib and OpenCV's
scene-text samples, 13 deterministic pairs each (plain opaque text in 14 faces and 6 colours
over flat and busy ground, touching lines, outlined and shadowed captions, logos, watermarks,
tiled marks, a carton whose printed brand belongs to the photo, and the photo untouched), split
by source image into a ``tune`` and a ``report`` half. Run the fetch first
(``python bench/corpora/text_overlays.py fetch``) or the scene-text photos are left out.

Per half and variant:

- ``plain >= 6 dB``: the share of ``plain`` pairs whose text boxes came out at least 6 dB closer
  to the clean photo (PSNR inside the boxes, output against input);
- ``worse``: the share of all pairs whose output is more than 0.1 dB further from the clean
  photo than the input (whole image; an untouched photo changed at all counts);
- ``own kept``: the share of pairs with text of the photo's own (scene-text photos, cartons)
  whose own text boxes came out within 1 dB of the input's PSNR against the clean photo
  (capped at 40 dB: a change under that is no change);
- mean whole-image PSNR per kind, input and output.

Run: ``.venv/bin/python bench/bench_text_removal.py [--half tune|report|both] [--every N]
[--variant default|...] [--sheet docs/text-removal-corpus.jpg]``. ``--every N`` takes every N-th
pair of each half (CPU is scarce; the figures say which).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "corpora"))

import text_overlays as corpus

from _common import print_table
from pixelmill.engines.base import EngineInputs
from pixelmill.engines.text_removal.engine import (
    TextRemovalEngine,
    TextRemovalParams,
)

CAP_DB = 40.0
"""Box PSNR is capped here: a change smaller than that is no change."""
IDENTICAL_DB = 99.0


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return IDENTICAL_DB if mse == 0 else float(10 * np.log10(255.0**2 / mse))


def box_psnr(a: np.ndarray, b: np.ndarray, boxes: list[corpus.Box]) -> float:
    m = np.zeros(a.shape[:2], bool)
    for x0, y0, x1, y1 in boxes:
        m[y0:y1, x0:x1] = True
    if not m.any():
        return IDENTICAL_DB
    return psnr(a[m], b[m])


def variants() -> dict[str, TextRemovalParams]:
    out = {"default": TextRemovalParams()}
    if "scope" in TextRemovalParams.model_fields:
        out["scope=all"] = TextRemovalParams.model_validate({"scope": "all"})
    return out


def score(pair: corpus.Pair, out: np.ndarray) -> dict[str, object]:
    row: dict[str, object] = {
        "id": pair.id,
        "kind": pair.kind,
        "in": psnr(pair.observed, pair.clean),
        "out": psnr(out, pair.clean),
    }
    if pair.boxes:
        row["box_in"] = box_psnr(pair.observed, pair.clean, pair.boxes)
        row["box_out"] = box_psnr(out, pair.clean, pair.boxes)
    if pair.own:
        row["own_in"] = min(CAP_DB, box_psnr(pair.observed, pair.clean, pair.own))
        row["own_out"] = min(CAP_DB, box_psnr(out, pair.clean, pair.own))
    return row


def summarise(rows: list[dict[str, object]], title: str) -> dict[str, float]:
    def f(r: dict[str, object], k: str) -> float:
        return float(r[k])  # type: ignore[arg-type]

    plain = [r for r in rows if r["kind"] == "plain"]
    gain6 = [f(r, "box_out") - f(r, "box_in") >= 6.0 for r in plain]
    worse = [f(r, "out") < f(r, "in") - 0.1 for r in rows]
    own = [r for r in rows if "own_in" in r]
    kept = [f(r, "own_out") >= f(r, "own_in") - 1.0 for r in own]
    summary: dict[str, float] = {
        "pairs": len(rows),
        "plain pairs": len(plain),
        "plain >= 6 dB %": 100 * float(np.mean(gain6)) if gain6 else float("nan"),
        "worse %": 100 * float(np.mean(worse)),
        "worse n": int(sum(worse)),
        "own-text pairs": len(own),
        "own kept %": 100 * float(np.mean(kept)) if kept else float("nan"),
    }
    print_table([{**summary}], title)
    kinds = sorted({str(r["kind"]) for r in rows})
    table = []
    for kind in kinds:
        rs = [r for r in rows if r["kind"] == kind]
        boxed = [r for r in rs if "box_in" in r]
        table.append(
            {
                "kind": kind,
                "pairs": len(rs),
                "input dB": float(np.mean([min(f(r, "in"), 60.0) for r in rs])),
                "output dB": float(np.mean([min(f(r, "out"), 60.0) for r in rs])),
                "box gain dB (median)": float(
                    np.median([f(r, "box_out") - f(r, "box_in") for r in boxed])
                )
                if boxed
                else float("nan"),
                "worse": sum(f(r, "out") < f(r, "in") - 0.1 for r in rs),
            }
        )
    print_table(table, "per kind (whole-image PSNR capped at 60 dB for the untouched photos)")
    misses = [str(r["id"]) for r, ok in zip(plain, gain6, strict=True) if not ok]
    if misses:
        print("plain pairs under 6 dB:", ", ".join(misses))
    worst = [str(r["id"]) for r, w in zip(rows, worse, strict=True) if w]
    if worst:
        print("worse than input:", ", ".join(worst))
    lost = [str(r["id"]) for r, ok in zip(own, kept, strict=True) if not ok]
    if lost:
        print("own text not kept:", ", ".join(lost))
    return summary


def tile(img: np.ndarray, label: str, width: int = 300) -> np.ndarray:
    h, w = img.shape[:2]
    t = cv2.resize(img, (width, round(width * h / w)), interpolation=cv2.INTER_AREA)
    t = np.ascontiguousarray(t[: int(width * 0.75)])
    t = cv2.copyMakeBorder(
        t, 0, int(width * 0.75) - t.shape[0] + 18, 0, 4, cv2.BORDER_CONSTANT, value=(255, 255, 255)
    )
    cv2.putText(
        t, label, (4, t.shape[0] - 5), cv2.FONT_HERSHEY_SIMPLEX, 0.42, (0, 0, 0), 1, cv2.LINE_AA
    )
    return np.asarray(t, np.uint8)


def write_sheet(path: Path, rows: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]) -> None:
    """Rows of (label, input, output, clean) side by side."""
    lines = []
    for label, inp, out, clean in rows:
        lines.append(
            np.hstack(
                [
                    tile(inp, f"{label} input {psnr(inp, clean):.1f} dB"),
                    tile(out, f"output {psnr(out, clean):.1f} dB"),
                    tile(clean, "clean"),
                ]
            )
        )
    width = max(x.shape[1] for x in lines)
    sheet = np.vstack(
        [np.pad(x, ((0, 0), (0, width - x.shape[1]), (0, 0)), constant_values=255) for x in lines]
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), cv2.cvtColor(sheet, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 85])


GATES: dict[str, dict[str, object]] = {
    "core (a sure core in each filled region)": {"core": 1.0},
    "core_share (a tenth of a filled region sure)": {"core_share": 0.0},
    "bar_aspect (no thin straight bars)": {"bar_aspect": 0.0},
    "glow (no highlights that fade out)": {"glow": 0.0},
    "lattice (tiled watermarks pooled)": {"lattice": False},
    "lattice_check (the lattice must explain more)": {"lattice_check": False},
    "sibling_explained (letters beside filled ones)": {"sibling_explained": 2.0},
    "head_explained (the head's opacity on flat photo)": {"head_explained": 2.0},
    "judge_power (coverage-weighted judging)": {"judge_power": 0.0},
    "fit_flat (refit where the photo is flattest)": {"fit_flat": 0.0},
    "fit_core (fit on confident coverage)": {"fit_core": 0.0},
    "max_opacity (image fit below 0.7)": {"max_opacity": 1.0},
    "max_cover (support under 20 %)": {"max_cover": 1.0},
    "min_confident (30 % of the support confident)": {"min_confident": 0.0},
    "min_explained (the fit explains half)": {"min_explained": -1.0},
    "halo (the 1-px edge of filled strokes)": {"halo": 0},
    "halo_alpha (halo only round sure strokes)": {"halo_alpha": 0.0},
    "halo_dev (halo only where it differs)": {"halo_dev": 0.0},
    "semi_opacity (semi-transparent fills unmixed)": {"semi_opacity": 0.0},
    "semi_agree (head and fit agree)": {"semi_agree": 2.0},
    "semi_explained (the fit explains 0.35)": {"semi_explained": -1.0},
    "semi_gamut (out-of-gamut pixels kept)": {"semi_gamut": 10.0},
    "exclude_opaque (filled strokes out of the fits)": {"exclude_opaque": False},
}
"""Each gate of ``unmix.Settings`` and the change that turns it off (``--ablate``)."""


def ablate(every: int, base_only: bool = False) -> None:
    """Each gate of ``unmix.py`` off in turn on the tune half (every ``every``-th pair): the
    learned step alone (network, fits, Telea fill: the gated inpainter would triple the time),
    mean whole-image PSNR, pairs worse than their input and ``plain`` pairs under 6 dB, against
    all gates on."""
    import dataclasses

    from pixelmill.engines.text_removal import learned, unmix

    net = learned.OverlayNetwork()
    net.load()
    pairs = [p for n, p in enumerate(corpus.pairs(only="tune")) if n % every == 0]
    cache = [(p, net.predict(p.observed)) for p in pairs]
    table = []
    base: dict[str, float] = {}
    t0 = time.perf_counter()
    for name, change in {"all gates on": {}, **({} if base_only else GATES)}.items():
        st = dataclasses.replace(learned.SETTINGS, **change)  # type: ignore[arg-type]
        got, worse, miss = [], 0, 0
        for p, out in cache:
            res = unmix.restore(
                p.observed,
                np.ascontiguousarray(out[..., learned.COVERAGE_CHANNEL]),
                np.ascontiguousarray(out[..., 0]),
                st,
            ).image
            got.append(min(psnr(res, p.clean), 60.0))
            worse += psnr(res, p.clean) < psnr(p.observed, p.clean) - 0.1
            if p.kind == "plain":
                miss += box_psnr(res, p.clean, p.boxes) - box_psnr(p.observed, p.clean, p.boxes) < 6
        row: dict[str, object] = {
            "gate off": name,
            "mean dB": float(np.mean(got)),
            "worse": worse,
            "plain < 6 dB": miss,
        }
        if not base:
            base = {"db": float(np.mean(got)), "worse": worse, "miss": miss}
        cost = base["db"] - float(np.mean(got))
        row["cost of removing dB"] = cost
        row["keep"] = (
            "keep" if cost > 0.1 or worse > base["worse"] or miss > base["miss"] else "drop"
        )
        table.append(row)
    print_table(
        table,
        f"unmix.py gates on the tune half ({len(pairs)} pairs, every {every}; learned step only, "
        f"Telea fill; {time.perf_counter() - t0:.0f} s)",
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--half", choices=("tune", "report", "both"), default="both")
    ap.add_argument("--every", type=int, default=1, help="every N-th pair of each half")
    ap.add_argument("--variant", action="append", help="default, scope=all (default: default)")
    ap.add_argument("--label", default="", help="printed in the titles (e.g. before / after)")
    ap.add_argument("--json", type=Path, help="write the per-pair rows here")
    ap.add_argument("--sheet", type=Path, help="contact sheet of the worst pairs of each half")
    ap.add_argument("--ablate", action="store_true", help="each unmix.py gate off, tune half")
    ap.add_argument("--base-only", action="store_true", help="--ablate: all gates on only")
    args = ap.parse_args()
    if args.ablate:
        ablate(args.every, args.base_only)
        return
    engine = TextRemovalEngine()
    engine.load()
    names = args.variant or ["default"]
    chosen = {n: variants()[n] for n in names}
    halves = ("tune", "report") if args.half == "both" else (args.half,)
    dump: dict[str, list[dict[str, object]]] = {}
    sheet_rows = []
    for half in halves:
        pairs = [p for n, p in enumerate(corpus.pairs(only=half)) if n % args.every == 0]
        for name, params in chosen.items():
            t0 = time.perf_counter()
            rows = []
            worst: list[tuple[float, corpus.Pair, np.ndarray]] = []
            for p in pairs:
                res = engine.run(EngineInputs(p.observed), params)
                out = res.images[0].pixels
                rows.append(score(p, out))
                if "lines" in res.details:
                    rows[-1]["lines"] = res.details["lines"]
                worst.append((float(rows[-1]["out"]) - float(rows[-1]["in"]), p, out))  # type: ignore[arg-type]
            secs = time.perf_counter() - t0
            summarise(
                rows,
                f"{args.label} {half} half, {name}: {len(pairs)} pairs (every {args.every}), "
                f"{secs:.0f} s",
            )
            dump[f"{half}/{name}"] = rows
            worst.sort(key=lambda t: t[0])
            sheet_rows += [(f"{half} {p.id}", p.observed, o, p.clean) for _, p, o in worst[:3]]
    if args.json:
        args.json.write_text(json.dumps(dump, indent=1))
    if args.sheet:
        write_sheet(args.sheet, sheet_rows)


if __name__ == "__main__":
    main()
