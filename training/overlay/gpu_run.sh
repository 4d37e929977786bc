#!/bin/bash
# Two overlay runs side by side on one GPU: A (patch 128, the stage-7 recipe) and B (patch 256).
# Usage (repository root, after gpu_pack.sh):
#   bash training/overlay/gpu_run.sh MINUTES WORKERS_EACH DEVICE OUTDIR [A.pt B.pt]
# Without checkpoints both start from member 1 of the shipped ensemble; with them, A and B
# continue from them (env LR, default 2e-4; SEED, default 2033).
set -u
MIN=$1; W=$2; DEV=$3; O=$4
mkdir -p /tmp/f "$O" && tar -C /tmp/f -xJf .gpu/fonts.tar.xz
if [ ! -d /usr/share/fonts/truetype/dejavu ]; then
  mkdir -p /usr/share/fonts/truetype && cp -r /tmp/f/fonts/dejavu /tmp/f/fonts/liberation /usr/share/fonts/truetype/
fi
export PYTHONPATH=/tmp/f/fonts/site PYTHONUNBUFFERED=1
ROOT=$PWD
INIT=$ROOT/src/pixelmill/engines/text_removal/models/pixelmill-overlay.onnx
init_a="--init-onnx $INIT --init-member 1"; init_b=$init_a
if [ $# -ge 6 ]; then init_a="--init $ROOT/$5"; init_b="--init $ROOT/$6"; fi
cd training/overlay
common="--outputs 8 --minutes $MIN --threads 2 --lr ${LR:-2e-4} --kind-weights 0.2,0.5,0.15,0.15
  --w-cover 1.0 --pos-weight 4 --seed ${SEED:-2033} --aug 0.3,0.25,0.25 --fonts wide
  --data $ROOT/.gpu/sr-train --workers $W --device $DEV --keep-every 0"
python3 train.py --out /tmp/runA --patch 128 --batch 12 --eval-every 8000 $init_a $common \
  > "$O/A.log" 2>&1 &
python3 train.py --out /tmp/runB --patch 256 --batch 12 --eval-every 4000 $init_b $common \
  > "$O/B.log" 2>&1 &
wait
for r in A B; do
  if [ -f /tmp/run$r/final.pt ]; then cp /tmp/run$r/final.pt "$O/$r-final.pt"
  else cp /tmp/run$r/latest.pt "$O/$r-latest.pt"; fi
  cp /tmp/run$r/log.json "$O/$r-log.json" 2>/dev/null
done
nvidia-smi --query-gpu=name,memory.used --format=csv > "$O/gpu.txt" 2>&1
ls -la "$O"
