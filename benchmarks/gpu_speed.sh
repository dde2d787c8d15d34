#!/usr/bin/env bash
# One lent GPU, one call: lra_keras beside the PyTorch references
# (`benchmarks/reference_speed.py`), then the mixers benchmark
# (`benchmarks/mixers.py`), inside a fixed budget, every result under $OUT.
#
#   OUT=/path REFS=.refs SCRIPT_SECONDS=540 REF_SECONDS=360 \
#     bash benchmarks/gpu_speed.sh
#
# REFS holds the references' sources, exported from their repositories
# into a folder git ignores and carried to the device:
#   git -C <state-spaces/s4 clone> archive HEAD models/s4 src \
#     | tar -x -C .refs/s4
#   git -C <facebookresearch/mega clone> archive HEAD fairseq examples/mega \
#     | tar -x -C .refs/mega
# (no mega folder: the MEGA row is left out). Keras, namex and optree come
# as wheels in .whl/ (carried), as for `benchmarks/gpu_session.sh`.
#
# 1. reference_speed.py: REF_MODELS at LENGTHS, TOKENS a batch, DTYPE
#    (float32 or mixed_bfloat16), JIT (our `jit_compile`: auto, true,
#    false), UNPADDED (1: our blocks without a padding mask), the
#    reference and ours under REF_BACKENDS (JAX and PyTorch
#    unless told), one child per side, model and backend; children not started
#    by REF_SECONDS are reported as not run.
# 2. mixers.py: MIX_MODELS (the transformer first: the ratios' baseline)
#    at the same sizes, MIX_BACKENDS in turn (PyTorch: one child for all;
#    JAX: one per model), until the script's budget is spent.
#
# $OUT gets: gpu.txt (nvidia-smi, versions), reference_speed.txt,
# mixers.txt and results.jsonl (every measurement as a JSON line, with
# "side" set for reference_speed's).
set -u
OUT=${OUT:?set OUT to the results folder}
REFS=${REFS:-.refs}
# the whole script's budget: keep it a minute under the call's timeout_s
SCRIPT_SECONDS=${SCRIPT_SECONDS:-540}
REF_SECONDS=${REF_SECONDS:-360}
DTYPE=${DTYPE:-float32}
LENGTHS=${LENGTHS:-1024 4096 16384}
TOKENS=${TOKENS:-65536}
REF_MODELS=${REF_MODELS-s4d s4 transformer mega}
MIX_MODELS=${MIX_MODELS:-transformer lru rtf megalodon local \
sparse_transformer longformer linformer reformer sinkhorn synthesizer \
bigbird linear_transformer performer}
MIX_BACKENDS=${MIX_BACKENDS-torch jax}
# our side of reference_speed: these backends
REF_BACKENDS=${REF_BACKENDS:-jax torch}
STEPS=${STEPS:-3}
# seconds for each of reference_speed's children (a torch.compile child
# compiles once per length)
CHILD_SECONDS=${CHILD_SECONDS:-120}
# auto, true (our steps under torch.compile / XLA) or false
JIT=${JIT:-auto}
# 1: our blocks get no padding mask (`--unpadded`, as on the pixel tasks;
# the reference Transformer has none); else an all-ones one (ListOps)
UNPADDED=${UNPADDED:-}
unpadded=()
[ -n "$UNPADDED" ] && unpadded=(--unpadded)
mkdir -p "$OUT" || exit 1
cd "$(dirname "$0")/.."
start=$(date +%s)
stamp() { echo "[$(($(date +%s) - start)) s] $*"; }
left() { echo $((SCRIPT_SECONDS - ($(date +%s) - start))); }

. benchmarks/device_env.sh
{
  nvidia-smi
  KERAS_BACKEND=jax python3 -c 'import jax, keras, torch; print("jax",
jax.__version__, jax.devices(), "| keras", keras.__version__, "| torch",
torch.__version__, torch.cuda.get_device_name())'
  git log -1 --format='commit %H %s' 2>/dev/null
} >"$OUT/gpu.txt" 2>&1
stamp "set up"; tail -2 "$OUT/gpu.txt"

# 1. beside the references
mega=()
[ -d "$REFS/mega/fairseq" ] && mega=(--mega-repo "$REFS/mega")
budget=$(($(left) - 30))
if [ "$budget" -gt 0 ] && [ -n "$REF_MODELS" ]; then
  timeout "$budget" python3 benchmarks/reference_speed.py \
    --s4-repo "$REFS/s4" "${mega[@]}" --models $REF_MODELS \
    --lengths $LENGTHS --tokens "$TOKENS" --dtype-policy "$DTYPE" \
    --backends $REF_BACKENDS --steps "$STEPS" --timeout "$CHILD_SECONDS" \
    --one-process \
    --jit-compile "$JIT" "${unpadded[@]}" \
    --deadline "$REF_SECONDS" --json-out "$OUT/results.jsonl" 2>&1 \
    | tee "$OUT/reference_speed.txt"
fi
stamp "reference_speed"

# 2. the mixers, each backend in turn
for backend in $MIX_BACKENDS; do
  budget=$(($(left) - 30))
  [ "$budget" -gt 30 ] || break
  timeout "$budget" python3 benchmarks/mixers.py --backends "$backend" \
    --models $MIX_MODELS --lengths $LENGTHS --tokens "$TOKENS" \
    --dtype-policy "$DTYPE" --steps "$STEPS" --timeout 90 --one-process \
    --jit-compile "$JIT" "${unpadded[@]}" \
    --deadline $((budget - 60)) --json-out "$OUT/results.jsonl" 2>&1 \
    | tee -a "$OUT/mixers.txt"
done
stamp "done"
