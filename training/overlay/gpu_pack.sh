#!/bin/bash
# Pack what gpu_run.sh needs into .gpu/ at the repository root (ignored by git; the device tool
# carries it: `carry: [".gpu"]`), small enough for the tool's 64 MiB transfer with the repo:
# the training photos as JPEG q93 (CBSD68) / q90 (Urban100), 4:4:4, same stems so data.split()
# picks the same hold-out (Sun-Hays JPEGs copied as they are), and the `wide` pool's fonts
# (DejaVu / Liberation and the six PyPI families, from the training venv) as one tar.xz.
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA=${DATA:-/work/shared/data/sr-train}
SITE=$(echo .venv-train/lib/python3*/site-packages)
grep -qx "/.gpu/" .git/info/exclude || echo "/.gpu/" >> .git/info/exclude
rm -rf .gpu/sr-train .gpu/fonts .gpu/fonts.tar.xz && mkdir -p .gpu/sr-train .gpu/fonts/site
.venv-train/bin/python - "$DATA" <<'PY'
import sys
from pathlib import Path

from PIL import Image

src = Path(sys.argv[1])
for folder, quality in (("CBSD68", 93), ("CUrban100", 90)):
    out = Path(".gpu/sr-train") / folder
    out.mkdir(parents=True)
    for f in sorted(src.glob(f"{folder}/*.png")):
        Image.open(f).convert("RGB").save(out / f"{f.stem}.jpg", quality=quality, subsampling=0)
PY
cp -r "$DATA/CSun_Hays80" .gpu/sr-train/
cp -r /usr/share/fonts/truetype/dejavu /usr/share/fonts/truetype/liberation .gpu/fonts/
for f in roboto lato source_sans_pro caladea fredoka_one amatic_sc; do
  cp -r "$SITE/font_$f" .gpu/fonts/site/
done
tar -C .gpu -cJf .gpu/fonts.tar.xz fonts && rm -rf .gpu/fonts
du -sh .gpu
