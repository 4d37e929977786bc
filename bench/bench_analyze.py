"""Benchmark ``analyze`` and ``image_to_prompt``: ms/MP at about 1 MP and what was found.

Run by hand: ``.venv/bin/python bench/bench_analyze.py [--repeat 3]``.

Inputs: scikit-image photos (offline) resized to about 1 MP, plus a synthetic 1 MP label with
rendered text and a QR code. The detectors (OCR, saliency, QR) run concurrently inside one
call, so these times depend on the cores available.
"""

from __future__ import annotations

import argparse
from functools import partial

import cv2
import numpy as np
import numpy.typing as npt
from skimage import data as skdata

from _common import ms_per_mp, print_table, resize_to_area, time_call
from pixelmill.engines.analyze import AnalyzeEngine, AnalyzeParams
from pixelmill.engines.base import EngineInputs
from pixelmill.engines.prompt import ImageToPromptEngine, ImageToPromptParams

Image = npt.NDArray[np.uint8]


def _label() -> Image:
    img = np.full((750, 1334, 3), 240, np.uint8)
    cv2.putText(img, "ORGANIC COFFEE", (60, 200), cv2.FONT_HERSHEY_DUPLEX, 3.0, (30, 30, 30), 6)
    qr = cv2.QRCodeEncoder.create().encode("https://pixelmill.example/bench")
    qr = cv2.resize(qr, None, fx=10, fy=10, interpolation=cv2.INTER_NEAREST)
    img[350 : 350 + qr.shape[0], 900 : 900 + qr.shape[1]] = qr[..., None]
    return img


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    analyze, prompt = AnalyzeEngine(), ImageToPromptEngine()
    analyze.load()
    prompt.load()
    images: dict[str, Image] = {
        name: resize_to_area(np.asarray(getattr(skdata, name)(), dtype=np.uint8), 1.0)
        for name in ("astronaut", "coffee", "chelsea")
    }
    images["label (text + QR)"] = _label()
    rows: list[dict[str, object]] = []
    for name, img in images.items():
        h, w = img.shape[:2]
        inputs = EngineInputs(img)
        t_analyze = time_call(partial(analyze.run, inputs, AnalyzeParams()), repeat=args.repeat)
        t_prompt = time_call(partial(prompt.run, inputs, ImageToPromptParams()), repeat=args.repeat)
        facts = analyze.run(inputs, AnalyzeParams()).details
        rows.append(
            {
                "image": name,
                "size": f"{w}x{h}",
                "analyze ms/MP": round(ms_per_mp(t_analyze, h, w)),
                "prompt ms/MP": round(ms_per_mp(t_prompt, h, w)),
                "objects": ", ".join(facts["objects"]),
                "categories": ", ".join(facts["categories"]),
                "quality": facts["quality_assessment"]["overall"],
                "text": "; ".join(facts["text_detected"])[:30],
            }
        )
    print_table(rows, "analyze / image_to_prompt: speed and findings (about 1 MP)")


if __name__ == "__main__":
    main()
