#!/bin/bash
# Issue 44's run on one lent GPU (training/sr/README.md, "Issue 44: clean input back"): the
# shipped balanced networks continued with more plain-bicubic ("clean") patches, four runs side
# by side, each exported (export.py writes the folded pair too) on the device and packed into one tar for the trip back.
#   A/B: balanced x2 (the stage-12 3-expert mixture) continued, --clean 0.3 / 0.5
#   C/D: balanced x4 (the stage-9 context network) as a 3-expert mixture, --clean 0.3 / 0.5
# Usage (repository root; .gpu/sr-train packed as in gpu_run.sh's header, carried):
#   bash training/sr/gpu_run44.sh MINUTES WORKERS_EACH OUTDIR
source training/sr/gpu_common.sh "$1" "$2" "$3" /tmp/r44
run() { # name scale clean seed lr extra...
  local n=$1 s=$2 c=$3 seed=$4 lr=$5; shift 5
  mixture_run "$n" "$s" "$seed" "$lr" 32 "$c" 3000 "$@"
}
run A 2 0.3 71 1.5e-4 --channels 16 --depth 7 --patch 64 --init-onnx "$M/pixelmill-sr-x2.onnx" &
run B 2 0.5 72 1.5e-4 --channels 16 --depth 7 --patch 64 --init-onnx "$M/pixelmill-sr-x2.onnx" &
run C 4 0.3 73 2e-4 --channels 24 --depth 8 --patch 48 --spread 1.5 --init-onnx "$M/pixelmill-sr-x4.onnx" &
run D 4 0.5 74 2e-4 --channels 24 --depth 8 --patch 48 --spread 1.5 --init-onnx "$M/pixelmill-sr-x4.onnx" &
wait
for n in A B C D; do
  ck=/tmp/r44/$n/final.pt; [ -f "$ck" ] || ck=/tmp/r44/$n/latest.pt
  [ -f "$ck" ] || continue
  s=2; case $n in C|D) s=4;; esac
  mkdir -p /tmp/r44/x/$n
  cp "$ck" /tmp/r44/x/$n/ck.pt
  "$PY" export.py "$ck" /tmp/r44/x/$n/pixelmill-sr-x$s.onnx >> "$O/export.log" 2>&1
  cp /tmp/r44/$n/log.json "/tmp/r44/x/$n/" 2>/dev/null
done
tar -C /tmp/r44/x -czf "$O/r44.tgz" . && ls -la "$O"
