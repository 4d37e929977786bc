#!/bin/bash
# Issue 44's third GPU run (training/sr/README.md, "Issue 44: a `high` worth its cost"): the
# shipped `high` ×4 (W, a 3-expert context mixture, 48 channels × 10 layers) trained on at the
# same shape, two runs side by side (train.py loads an equal-shape export as it is); each
# exported on the device and packed into its own tar for the trip back.
#   A: W's recipe at half the learning rate (lr 1e-4, batch 32, patch 48)
#   B: lr 1e-4, batch 64, patch 64
# Usage (repository root; .gpu/sr-train packed as training/overlay/gpu_pack.sh does, carried):
#   bash training/sr/gpu_run44c.sh MINUTES WORKERS_EACH OUTDIR
source training/sr/gpu_common.sh "$1" "$2" "$3" /tmp/r44c
run() { # name seed lr batch patch
  mixture_run "$1" 4 "$2" "$3" "$4" 0.3 4000 --channels 48 --depth 10 --patch "$5" \
    --init-onnx "$M/pixelmill-sr-x4-high.onnx"
}
run A 101 1e-4 32 48 &
run B 102 1e-4 64 64 &
wait
for n in A B; do export_run $n pixelmill-sr-x4-high; done
ls -la "$O"
