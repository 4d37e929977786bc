# Sourced by the GPU run scripts (gpu_run44.sh, gpu_run44b.sh) from the repository root:
#   source training/sr/gpu_common.sh MINUTES WORKERS_EACH OUTDIR SCRATCH
# Sets MIN, W, O, SCRATCH, ROOT, M (the shipped models), DATA (.gpu/sr-train unless DATA is set)
# and PY (python3 unless set), writes OUTDIR/env.txt, enters training/sr, and defines
# mixture_run, one train.py run of a 3-expert context mixture as every issue-44 run was, and
# export_run, one run's checkpoint exported and packed for the trip back.
set -u
MIN=$1; W=$2; O=$3; SCRATCH=$4
mkdir -p "$O" "$SCRATCH"
export PYTHONUNBUFFERED=1
ROOT=$PWD
M=$ROOT/src/pixelmill/engines/upscale/models
DATA=${DATA:-$ROOT/.gpu/sr-train}
PY=${PY:-python3}
{ nvidia-smi -L; "$PY" -c "import torch; print(torch.__version__, torch.cuda.is_available())"; nproc; } > "$O/env.txt" 2>&1
cd training/sr

mixture_run() { # name scale seed lr batch clean eval_every extra...; log in OUTDIR/name.log
  local n=$1 s=$2 seed=$3 lr=$4 b=$5 c=$6 ev=$7; shift 7
  "$PY" train.py --out "$SCRATCH/$n" --scale "$s" --batch "$b" --lr "$lr" --clean "$c" \
    --seed "$seed" --steps 1000000000 --minutes "$MIN" --threads 2 --loss logmse --context \
    --experts 3 --warmup 200 --eval-every "$ev" --eval-conditions 4 --data "$DATA" \
    --workers "$W" --device cuda --kernel-prob 0.25,0.1,0.1,0.1,0.1,0.175,0.175 "$@" \
    > "$O/$n.log" 2>&1
}

export_run() { # name model-name; SCRATCH/name's final (else latest) checkpoint exported (with the
  # folded pair export.py writes beside it), the checkpoint and log kept, tarred into OUTDIR
  local n=$1 name=$2 ck=$SCRATCH/$1/final.pt
  [ -f "$ck" ] || ck=$SCRATCH/$n/latest.pt
  [ -f "$ck" ] || return 0
  mkdir -p "$SCRATCH/x/$n"
  "$PY" export.py "$ck" "$SCRATCH/x/$n/$name.onnx" --name "$name" >> "$O/export.log" 2>&1
  cp "$ck" "$SCRATCH/x/$n/ck.pt"
  cp "$SCRATCH/$n/log.json" "$SCRATCH/x/$n/" 2>/dev/null
  tar -C "$SCRATCH/x" -czf "$O/$n.tgz" "$n"
}
