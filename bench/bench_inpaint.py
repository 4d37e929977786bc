"""Benchmark pixelmill-inpaint (the learned fill of opaque overlay strokes,
``engines/text_removal/inpaint.py``) beside OpenCV's Telea, the fill it corrects.

Quality, two sets, PSNR inside the mask and over the whole image, Telea vs Telea + network:
- the inpainter's held-out samples (``training/inpaint/masks.py``: the 12 held-out photos of
  ``/work/shared/data/sr-train``, capped at 512 px, two seeded stroke masks each: captions,
  logos, free-form strokes);
- "SALE 50% OFF" drawn in bold white over six scikit-image photos (brick, grass, gravel, coffee,
  astronaut, chelsea), the case the tests check.

Speed: ms per megapixel of ``Inpainter.fill`` (Telea included) against Telea alone on a 1 MP and
a 4 MP photo with a caption (mask ~3 % of the pixels). Memory: the peak RSS growth of a first and
a second 4 MP call (the first keeps some of what it allocated).

Run: ``.venv/bin/python bench/bench_inpaint.py [--sheet docs/inpaint.jpg]``
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from functools import partial
from pathlib import Path

import cv2
import numpy as np
from skimage import data as skdata

from _common import ms_per_mp, print_table, psnr, resize_to_area, time_call
from pixelmill.engines.text_removal import inpaint
from pixelmill.engines.text_removal.inpaint import INPAINTER

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "training" / "inpaint"))
# training/inpaint/masks.py: the held-out stroke samples (numpy / PIL / OpenCV, no torch)
masks = importlib.import_module("masks")

RADIUS = 3
PHOTOS = ("brick", "grass", "gravel", "coffee", "astronaut", "chelsea")


def photo(name: str) -> np.ndarray:
    im = np.asarray(getattr(skdata, name)(), dtype=np.uint8)
    return np.ascontiguousarray(np.dstack([im] * 3) if im.ndim == 2 else im[..., :3])


def with_text(rgb: np.ndarray, text: str = "SALE 50% OFF") -> tuple[np.ndarray, np.ndarray]:
    """Bold white text across the middle (as ``tests/engines/text_removal/test_inpaint.py``),
    and its mask grown by 1 px."""
    h, w = rgb.shape[:2]
    ink = np.zeros((h, w), np.uint8)
    cv2.putText(ink, text, (w // 20, h // 2), cv2.FONT_HERSHEY_SIMPLEX, w / 330, 255, 7, 16)
    a = ink.astype(np.float32)[..., None] / 255.0
    observed = np.clip(np.rint(rgb * (1.0 - a) + 255.0 * a), 0, 255).astype(np.uint8)
    mask = cv2.dilate((ink > 0).astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    return observed, mask


def score(label: str, samples: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]) -> None:
    rows: list[dict[str, object]] = []
    gains = []
    for name, observed, mask, clean in samples:
        telea = inpaint.telea(observed, mask, RADIUS)
        gated = INPAINTER.fill(observed, mask, RADIUS)
        t_in, g_in = psnr(telea[mask], clean[mask]), psnr(gated[mask], clean[mask])
        gains.append(g_in - t_in)
        rows.append(
            {
                "sample": name,
                "mask %": 100 * float(mask.mean()),
                "Telea in mask": t_in,
                "gated in mask": g_in,
                "gain": g_in - t_in,
                "Telea whole": psnr(telea, clean),
                "gated whole": psnr(gated, clean),
            }
        )
    print_table(rows, f"{label}: PSNR (dB), Telea vs Telea + pixelmill-inpaint")
    g = np.array(gains)
    print(
        f"{label}: mean in-mask gain {g.mean():+.2f} dB, median {np.median(g):+.2f}, "
        f"min {g.min():+.2f}, {(g < 0).sum()} of {len(g)} below Telea\n"
    )


def speed() -> None:
    rows: list[dict[str, object]] = []
    for mp in (1.0, 4.0):
        clean = resize_to_area(photo("coffee"), mp)
        observed, mask = with_text(clean)
        h, w = mask.shape
        t_telea = time_call(partial(inpaint.telea, observed, mask, RADIUS), repeat=5)
        t_gated = time_call(partial(INPAINTER.fill, observed, mask, RADIUS), repeat=5)
        rows.append(
            {
                "size": f"{w}x{h}",
                "mask %": 100 * float(mask.mean()),
                "Telea ms/MP": ms_per_mp(t_telea, h, w),
                "Telea + network ms/MP": ms_per_mp(t_gated, h, w),
            }
        )
    print_table(
        rows,
        f"Speed, median of 5 after 1 warm-up (load average {os.getloadavg()[0]:.1f}, "
        f"{os.cpu_count()} CPUs)",
    )


def memory() -> None:
    clean = resize_to_area(photo("coffee"), 4.0)
    observed, mask = with_text(clean)
    INPAINTER.fill(observed[:64, :64], mask[:64, :64], RADIUS)  # load the session
    for label in ("first 4 MP fill", "second 4 MP fill"):
        Path("/proc/self/clear_refs").write_text("5")  # reset the peak (VmHWM) to the RSS
        before = _status_kib("VmRSS")
        INPAINTER.fill(observed, mask, RADIUS)
        peak, after = _status_kib("VmHWM") - before, _status_kib("VmRSS") - before
        print(f"{label}: peak RSS +{peak / 1024:.0f} MiB, +{after / 1024:.0f} MiB after it")
    print()


def _status_kib(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {key} in /proc/self/status")


def sheet(path: Path) -> None:
    """Rows: brick, coffee, astronaut (the band of the caption, enlarged); columns: input,
    Telea, Telea + network, the photo; a label strip above each tile."""
    rows = []
    for name in ("brick", "coffee", "astronaut"):
        clean = photo(name)
        observed, mask = with_text(clean)
        h, w = mask.shape
        telea = inpaint.telea(observed, mask, RADIUS)
        gated = INPAINTER.fill(observed, mask, RADIUS)
        band = np.s_[h // 2 - round(0.1 * w) : h // 2 + round(0.04 * w), : round(0.72 * w)]
        tiles = []
        for label, im in (
            ("input", observed),
            ("Telea", telea),
            ("gated", gated),
            ("photo", clean),
        ):
            t = np.ascontiguousarray(im[band])
            size = (540, round(540 * t.shape[0] / t.shape[1]))
            t = cv2.resize(t, size, interpolation=cv2.INTER_CUBIC)
            db = (
                f" {psnr(im[mask], clean[mask]):.1f} dB in the mask"
                if label in ("Telea", "gated")
                else ""
            )
            strip = np.zeros((24, t.shape[1], 3), np.uint8)
            cv2.putText(
                strip,
                f"{name}: {label}{db}",
                (6, 17),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.5,
                (255, 255, 0),
                1,
                16,
            )
            tile = np.vstack([strip, t])
            tiles.append(
                cv2.copyMakeBorder(tile, 0, 4, 0, 4, cv2.BORDER_CONSTANT, value=(255, 255, 255))
            )
        rows.append(np.hstack(tiles))
    out = np.vstack(rows)
    cv2.imwrite(str(path), cv2.cvtColor(out, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 90])
    print(f"wrote {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, default=Path("/work/shared/data/sr-train"))
    ap.add_argument("--sheet", type=Path, default=None, help="also write a contact sheet here")
    args = ap.parse_args()
    _, val_paths = masks.overlay.split(args.data)
    held = [(s.name, s.observed, s.mask, s.clean) for s in masks.validation(val_paths)]
    memory()  # first, in a process that has not yet held the larger arrays below
    score("held-out stroke samples", held)
    score("caption over scikit-image photos", [(n, *with_text(photo(n)), photo(n)) for n in PHOTOS])
    speed()
    if args.sheet:
        sheet(args.sheet)


if __name__ == "__main__":
    main()
