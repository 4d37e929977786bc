"""The product category classifier on a labelled set (``tests/support/product_photos.py``):
accuracy per category in the spec's vocabulary, the confusions, and the time per photo.

    python bench/bench_classify.py [--per-kind 3]

The set is mostly drawn (see that module): the figures are an upper bound for real
catalogue photos, and the rules were written looking at the same kinds of drawings."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.product_photos import samples

from pixelmill.categories import to_spec
from pixelmill.engines.analyze import analyze_image, load_models


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--per-kind", type=int, default=3)
    parser.add_argument(
        "--seed", type=int, default=8, help="7: the draws the rules were tuned on; 8: held out"
    )
    args = parser.parse_args()
    load_models()
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    wrong: dict[str, list[str]] = defaultdict(list)
    seconds = 0.0
    items = samples(args.per_kind, args.seed)
    for s in items:
        start = time.perf_counter()
        guess = analyze_image(s.image)["product_category"]
        seconds += time.perf_counter() - start
        total[s.label] += 1
        if guess["category"] == s.label:
            right[s.label] += 1
        else:
            wrong[s.label].append(f"{s.name}->{guess['category']}")
    print(f"{'category':12s} {'right':>5s} {'of':>3s}  confusions")
    for label in sorted(total):
        print(f"{label:12s} {right[label]:5d} {total[label]:3d}  {', '.join(wrong[label])}")
    n, ok = sum(total.values()), sum(right.values())
    print(f"accuracy {ok}/{n} = {ok / n:.1%}; {seconds / n * 1000:.0f} ms per photo (analysis)")
    print("spec vocabulary:", ", ".join(sorted({to_spec(c) for c in total})))


if __name__ == "__main__":
    main()
