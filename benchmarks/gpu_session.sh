#!/usr/bin/env bash
# One lent GPU, one call: paper-preset training runs, then the mixers
# benchmark, inside a fixed budget, every result written under $OUT.
#
#   OUT=/path TRAIN_MINUTES=2 BENCH_SECONDS=240 SCRIPT_SECONDS=540 \
#     bash benchmarks/gpu_session.sh
#
# (BENCH_LENGTH, BENCH_TOKENS and SET below change the sizes.)
#
# For the device machine of DEVELOPERS.md (Python with JAX and PyTorch on
# CUDA, no Keras, no TensorFlow): Keras, namex and optree come as wheels in
# .whl/ (carried), and lra_keras runs from the checkout (PYTHONPATH).
#
# 1. Generates the data of the runs once (ListOps 96k/2k/2k trees, 200,000
#    hard Pathfinder-32 images) with every CPU.
# 2. Trains at once, sharing the GPU, the paper presets of: S4D on ListOps
#    (JAX and PyTorch), S4D on Pathfinder (JAX), the YCTFS rotary
#    Transformer with its techniques on ListOps (JAX). Each stops at
#    `time_limit_minutes=TRAIN_MINUTES` (the epoch in progress ends there,
#    validated), then is tested. Their epoch times are shared-GPU times.
# 3. `benchmarks/mixers.py` alone on the GPU: every family at L=4096,
#    65,536 tokens a batch, fp32, JAX then PyTorch, new families first,
#    until BENCH_SECONDS are spent (the rest are reported as not run).
#
# $OUT gets: gpu.txt (nvidia-smi, versions), data.log, runs.tar.gz (the
# run directories without weights or backups, and each run's log
# <run>.log), mixers_<backend>.txt and mixers.jsonl.
set -u
OUT=${OUT:?set OUT to the results folder}
TRAIN_MINUTES=${TRAIN_MINUTES:-2}
BENCH_SECONDS=${BENCH_SECONDS:-240}
# the whole script's budget: keep it under the call's timeout_s, with a
# minute to spare (a benchmark child started just before its deadline may
# run 45 s more). BENCH_SECONDS and SCRIPT_SECONDS are whole seconds.
SCRIPT_SECONDS=${SCRIPT_SECONDS:-540}
BENCH_LENGTH=${BENCH_LENGTH:-4096}
BENCH_TOKENS=${BENCH_TOKENS:-65536}
# hyperparameters added to every run and to the data it generates, for a
# dry run on a CPU (e.g. SET="train_samples=200 batch_size=8"
# SET_PATHFINDER="num_samples=300")
SET=${SET:-}
SET_PATHFINDER=${SET_PATHFINDER:-}
mkdir -p "$OUT" || exit 1
cd "$(dirname "$0")/.."
start=$(date +%s)
stamp() { echo "[$(($(date +%s) - start)) s] $*"; }

. benchmarks/device_env.sh
# JAX unless told: Keras's default backend, TensorFlow, is not there
export KERAS_BACKEND=${KERAS_BACKEND:-jax}
export LRA_KERAS_DATA=${LRA_KERAS_DATA:-/tmp/lra_data}
{
  nvidia-smi
  python3 -c 'import jax, keras, torch; print("jax", jax.__version__,
jax.devices(), "| keras", keras.__version__, "| torch", torch.__version__,
torch.cuda.get_device_name())'
  git log -1 --format='commit %H %s' 2>/dev/null
} >"$OUT/gpu.txt" 2>&1
stamp "set up"; tail -3 "$OUT/gpu.txt"

# 1. data, once (the runs would otherwise all generate the same files)
for spec in "listops s4d" "pathfinder s4d $SET_PATHFINDER"; do
  python3 - $spec $SET >>"$OUT/data.log" 2>&1 <<'EOF' &
import sys, time
from lra_keras.cli import parse_overrides
from lra_keras.hparams import get_hparams
from lra_keras.training.inputs import load_splits
t = time.time()
task, model = sys.argv[1:3]
hp = get_hparams(task, model, **parse_overrides(sys.argv[3:]))
splits = load_splits(task, hp, None)
print(task, {k: v[0].shape for k, v in splits.items()},
      f"{time.time() - t:.0f} s", flush=True)
EOF
done
wait
stamp "data"; grep -v "it/s\|%|" "$OUT/data.log" | tail -4

# 2. training runs, together
# Outside $OUT (whose files come back 8 at most): tarred after training.
runs=/tmp/gpu_runs
# Each run gets its time limit and 150 s to start, validate and test, but
# all end by SCRIPT_SECONDS - BENCH_SECONDS - 30 s after the start (a JAX
# run compiling a new bucket shape in its test could otherwise outlast
# the call, and the tar below would never be written).
left=$((SCRIPT_SECONDS - BENCH_SECONDS - 30 - ($(date +%s) - start)))
train_timeout=$(python3 -c "print(max(30, min(int($TRAIN_MINUTES * 60 + 150), $left)))")
mkdir -p "$runs"
train() {  # name backend recipe args...
  local name=$1 backend=$2 recipe=$3; shift 3
  KERAS_BACKEND=$backend timeout "$train_timeout" \
    python3 "recipes/$recipe.py" --preset paper --no-export \
    --out "$runs/$name" --set time_limit_minutes="$TRAIN_MINUTES" $SET \
    "$@" >"$runs/$name.log" 2>&1
  echo "$name: exit $? | $(grep -a 'test accuracy' "$runs/$name.log")"
}
train listops_s4d_jax jax listops --model s4d &
train listops_s4d_torch torch listops --model s4d &
train pathfinder_s4d_jax jax pathfinder --model s4d \
  ${SET_PATHFINDER:+--set $SET_PATHFINDER} &
train listops_transformer_multitask_augment_jax jax listops \
  --model transformer --technique multitask --augment &
wait
stamp "training"
for f in "$runs"/*/metrics.csv; do echo "$f"; cat "$f"; done
tar -czf "$OUT/runs.tar.gz" -C "$runs" --exclude='*.h5' \
  --exclude='*.keras' --exclude=backup .

# 3. the mixers benchmark, alone on the GPU: JAX gets 3/5 of the time
bench0=$(date +%s)
for backend in jax torch; do
  if [ "$backend" = jax ]; then share=$((BENCH_SECONDS * 3 / 5))
  else share=$((BENCH_SECONDS - ($(date +%s) - bench0))); fi
  [ "$share" -gt 0 ] || share=0
  python3 benchmarks/mixers.py --backends $backend --lengths $BENCH_LENGTH \
    --tokens $BENCH_TOKENS --steps 5 --timeout 45 --deadline "$share" \
    --json-out "$OUT/mixers.jsonl" --models transformer s4d lru rtf megalodon \
    local sparse_transformer longformer linformer reformer sinkhorn \
    synthesizer bigbird linear_transformer performer s4 dlr s5 mega \
    gmlp conv 2>&1 | tee "$OUT/mixers_$backend.txt"
done
stamp "done"
