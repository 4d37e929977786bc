#!/bin/bash
# Issue 44's second GPU run (training/sr/README.md, "Issue 44: a `high` worth its cost"): `high`
# ×4 grown from the shipped balanced ×4 mixture (wider and deeper, `MixSRNet.load_narrower`: it
# starts exactly where balanced ×4 is), and `high` ×2 trained on with extra clean patches, four
# runs side by side; each exported on the device and packed into its own tar for the trip back.
#   W: high ×4, 48 channels × 10 layers      X: high ×4, 64 channels × 12 layers
#   Y: high ×2 continued as it is (32 × 10)  Z: high ×2 grown to 32 × 12
# Usage (repository root; .gpu/sr-train packed by training/overlay/gpu_pack.sh, carried):
#   bash training/sr/gpu_run44b.sh MINUTES WORKERS_EACH OUTDIR
source training/sr/gpu_common.sh "$1" "$2" "$3" /tmp/r44b
run() { # name scale seed lr batch extra...
  local n=$1 s=$2 seed=$3 lr=$4 b=$5; shift 5
  mixture_run "$n" "$s" "$seed" "$lr" "$b" 0.3 4000 "$@"
}
run W 4 91 2e-4 32 --channels 48 --depth 10 --patch 48 --init-onnx "$M/pixelmill-sr-x4.onnx" &
run X 4 92 2e-4 32 --channels 64 --depth 12 --patch 48 --init-onnx "$M/pixelmill-sr-x4.onnx" &
run Y 2 93 1e-4 64 --channels 32 --depth 10 --patch 64 --init-onnx "$M/pixelmill-sr-x2-high.onnx" &
run Z 2 94 1e-4 64 --channels 32 --depth 12 --patch 64 --init-onnx "$M/pixelmill-sr-x2-high.onnx" &
wait
for n in W X Y Z; do
  case $n in W|X) export_run $n pixelmill-sr-x4-high;; *) export_run $n pixelmill-sr-x2-high;; esac
done
ls -la "$O"
