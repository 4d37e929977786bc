#!/bin/bash
# Two ×2 super-resolution runs side by side on one GPU (the first run of the twelfth stage,
# training/sr/README.md "On a GPU"; what it ran was the stage-8 `high` and the stage-10 balanced):
#   H: the shipped `high` network continued as a 3-expert mixture (a plain export becomes 3
#      copies of itself, router centred with --spread; a mixture export loads as it is);
#   B: the shipped `balanced` mixture continued, experts and router as exported, with 10 %
#      extra clean patches and nearest weighted up.
# Both use the loss in decibels; H keeps the stage-10 kernel draw.
# Usage (repository root, after training/overlay/gpu_pack.sh made .gpu/sr-train; the device
# tool carries it with `carry: [".gpu"]`):
#   bash training/sr/gpu_run.sh MINUTES WORKERS_EACH DEVICE OUTDIR
# Env: SEED (default 43), BATCH (default 32; BATCH_H, BATCH_B per run), PY (default python3, the device's torch). The photos in .gpu are JPEG q90/q93 4:4:4 copies
# (same stems, so data.split keeps the hold-out): the logged gains are on those copies; score
# the exports here on the PNGs (score.py).
set -u
MIN=$1; W=$2; DEV=$3; O=$4
mkdir -p "$O"
export PYTHONUNBUFFERED=1
ROOT=$PWD
M=$ROOT/src/pixelmill/engines/upscale/models
DATA=${DATA:-$ROOT/.gpu/sr-train}
SEED=${SEED:-43}; BATCH=${BATCH:-32}; PY=${PY:-python3}
BATCH_H=${BATCH_H:-$BATCH}; BATCH_B=${BATCH_B:-$BATCH}
{ nvidia-smi -L; "$PY" -c "import torch; print(torch.__version__, torch.cuda.is_available())"; nproc; df -h /dev/shm; } > "$O/env.txt" 2>&1
cd training/sr
common="--scale 2 --patch 64 --steps 1000000000 --minutes $MIN --threads 2
  --loss logmse --context --experts 3 --warmup 300 --eval-every 2000 --eval-conditions 4 --data $DATA --workers $W --device $DEV"
"$PY" train.py --out /tmp/runH --batch "$BATCH_H" --channels 32 --depth 10 --lr 2e-4 --spread 1.5 \
  --kernel-prob 0.25,0.1,0.1,0.1,0.1,0.175,0.175 --seed "$SEED" \
  --init-onnx "$M/pixelmill-sr-x2-high.onnx" $common > "$O/H.log" 2>&1 &
"$PY" train.py --out /tmp/runB --batch "$BATCH_B" --channels 16 --depth 7 --lr 1.5e-4 --clean 0.1 \
  --kernel-prob 0.25,0.1,0.1,0.1,0.1,0.2,0.2 --seed "$((SEED + 1))" \
  --init-onnx "$M/pixelmill-sr-x2.onnx" $common > "$O/B.log" 2>&1 &
wait
for r in H B; do
  if [ -f /tmp/run$r/final.pt ]; then cp /tmp/run$r/final.pt "$O/$r-final.pt"
  else cp /tmp/run$r/latest.pt "$O/$r-latest.pt"; fi
  cp /tmp/run$r/log.json "$O/$r-log.json" 2>/dev/null
done
nvidia-smi --query-gpu=name,memory.used --format=csv > "$O/gpu.txt" 2>&1
ls -la "$O"
