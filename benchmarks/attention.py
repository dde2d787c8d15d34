"""Attention layer benchmark: every backend x every attention path.

    python benchmarks/attention.py [--lengths 1024 2048] [--batch 16]
    python benchmarks/attention.py --implementations fused linear performer \\
        linformer --lengths 1024 4096 16384 --batch 1
    python benchmarks/attention.py --backends jax torch --implementations \\
        fused chunked --lengths 4096 16384 --batch 4 \\
        --dtype-policy mixed_bfloat16 [--no-mask]
    python benchmarks/attention.py --backends tensorflow --no-xla

Times one training step (forward + backward) of `RotaryMultiHeadAttention`
(hidden 128, 4 heads) and records the peak resident memory of the process,
for each backend and each implementation of
`lra_keras.layers.attention_kernels.attention`. Each (backend, path, length)
runs in its own subprocess, since the backend is fixed per process and peak
memory is per process. Ratios are against the `fused` path (Keras's own
`keras.ops.dot_product_attention`) of the same backend and length, measured
in the same command. `auto` is what the library uses by default.

The efficient attentions of LRA (`local`, `synthesizer`, `linear`,
`performer`, `linformer`, `sparse_transformer`, `longformer`, `bigbird`,
`reformer`, `sinkhorn`: `RotaryMultiHeadAttention(attention_type=...)` at
LRA's settings, see `lra_keras.layers.efficient_attention`,
`sparse_attention` and `lsh_attention`) run as paths too; their GFLOP/s
column is empty (the count above is softmax attention's). With several
lengths, the last table gives each path's memory growth exponent between
successive lengths: log(peak growth ratio) / log(length ratio), 1 for
memory linear in L, 2 for quadratic. `--set KEY=VALUE ...` passes options
to their layer (every path of the command), e.g. `--set
sparse_pattern=strided` or `reformer_chunk_size=64`.

`--dtype-policy mixed_bfloat16` runs the layer under that Keras policy
(bf16 attention inputs), and `--no-mask` passes no padding mask: together
they show whether the fused path gets a flash kernel on a GPU (cuDNN under
JAX, PyTorch's FLASH backend, neither of which takes a boolean mask
as such). On a GPU each step is synchronised and the memory column is the
device's peak allocation (`benchmarks/mixers.py`'s) rather than the
growth of the process's resident set.

The `% matmul` column is the attention's GFLOP/s as a share of the
backend's own ceiling, measured in the same process: a 2048 x 2048 x 2048
product in the layer's compute dtype (float32, or bfloat16 under
`mixed_bfloat16`), compiled as the step is.

TensorFlow's step is a `tf.function(jit_compile=True)`; `--no-xla` runs
it without XLA, as a recipe's `fit` does on a machine with only CPUs
(Keras's `jit_compile="auto"`), where `auto` picks its path differently
(`attention_kernels.resolve_implementation`).
"""

import argparse
import json
import math
import os
import resource
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from lra_keras.cli import parse_overrides  # noqa: E402

BACKENDS = ("jax", "tensorflow", "torch")
IMPLEMENTATIONS = ("fused", "chunked", "reference")
EFFICIENT = ("local", "synthesizer", "linear", "performer", "linformer",
             "sparse_transformer", "longformer", "bigbird", "reformer",
             "sinkhorn")


def _peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def matmul_gflops(dtype="float32", n=2048, repeats=3, xla=True):
    """GFLOP/s of an n x n by n x n product on this backend, compiled as
    `child`'s step is (jax.jit; TensorFlow's `tf.function`, with XLA
    unless `xla` is False; PyTorch eager), the best of `repeats`."""
    import keras
    import mixers
    import numpy as np

    backend = keras.backend.backend()
    a, b = (keras.ops.cast(keras.ops.convert_to_tensor(
        np.random.default_rng(seed).normal(size=(n, n)).astype("float32")),
        dtype) for seed in (0, 1))
    if backend == "jax":
        import jax

        product = jax.jit(keras.ops.matmul)

        def run():
            jax.block_until_ready(product(a, b))
    elif backend == "tensorflow":
        import tensorflow as tf

        product = tf.function(keras.ops.matmul, jit_compile=xla)

        def run():
            product(a, b).numpy()
    else:
        import torch

        def run():
            keras.ops.matmul(a, b)
            if torch.cuda.is_available():
                torch.cuda.synchronize()

    return 2 * n**3 / mixers._timed(run, repeats, best=True) / 1e9


def child(impl, length, batch, hidden, heads, repeats,
          dtype_policy="float32", masked=True, options=None, xla=True):
    import keras
    import mixers
    import numpy as np

    from lra_keras.layers import RotaryMultiHeadAttention
    from lra_keras.layers.attention_kernels import flash_eligible
    from lra_keras.layers.attention_kernels import resolve_implementation

    backend = keras.backend.backend()
    if impl in EFFICIENT:
        layer = RotaryMultiHeadAttention(
            num_heads=heads, key_dim=hidden // heads, attention_type=impl,
            max_length=length, feature_redraw=False, dtype=dtype_policy,
            **(options or {}),
        )
    else:
        layer = RotaryMultiHeadAttention(
            num_heads=heads, key_dim=hidden // heads,
            attention_implementation=impl, dtype=dtype_policy,
        )
    x = np.random.default_rng(0).normal(size=(batch, length, hidden))
    x = keras.ops.convert_to_tensor(x.astype("float32"))
    mask = (keras.ops.convert_to_tensor(np.ones((batch, length), bool))
            if masked else None)
    layer.build(x.shape)
    weights = [w.value for w in layer.trainable_weights]
    # the Performer's random features and seed state
    fixed = [w.value for w in layer.non_trainable_variables]

    def loss_fn(ws, x):
        out, _ = layer.stateless_call(ws, fixed, x, padding_mask=mask)
        return keras.ops.mean(out**2)

    if backend == "jax":
        import jax

        step = jax.jit(jax.grad(loss_fn))

        def run():
            jax.block_until_ready(step(weights, x))
    elif backend == "tensorflow":
        import tensorflow as tf

        @tf.function(jit_compile=xla)
        def step(x):
            with tf.GradientTape() as tape:
                tape.watch(weights)
                loss = loss_fn(weights, x)
            return tape.gradient(loss, weights)

        def run():
            [g.numpy() for g in step(x)]
    else:
        import torch

        def run():
            ws = [w.detach().requires_grad_(True) for w in weights]
            torch.autograd.grad(loss_fn(ws, x), ws)
            if torch.cuda.is_available():
                torch.cuda.synchronize()

    # before the memory baseline, which its operands stay out of
    ceiling = matmul_gflops(layer.compute_dtype, xla=xla)
    accelerator = mixers._accelerator()
    if accelerator and accelerator[2]:
        accelerator[2]()
    before = _peak_mib()
    seconds = mixers._timed(run, repeats, best=True)
    flops = 3 * 4 * batch * length * length * hidden  # QK^T and PV, x3

    def resolve():
        return impl if impl in EFFICIENT else resolve_implementation(
            impl, length, scores=batch * heads * length * length,
            flash=flash_eligible(keras.ops.zeros(
                (1, 1, 1, hidden // heads), layer.compute_dtype), mask))

    resolved = [resolve()]
    if backend == "tensorflow":  # what `auto` picks inside the step
        tf.function(lambda: resolved.append(resolve()) or tf.zeros(()),
                    jit_compile=xla)()
    return dict(
        backend=backend,
        impl=impl,
        resolved=resolved[-1],
        length=length,
        seconds=seconds,
        gflops=None if impl in EFFICIENT else flops / seconds / 1e9,
        matmul_gflops=ceiling,
        peak_mib=_peak_mib(),
        # on a GPU the device's peak allocation (JAX's: the process's)
        growth_mib=(accelerator[1]() if accelerator
                    else _peak_mib() - before),
        dtype_policy=dtype_policy,
        masked=masked,
        options=options or {},
        xla=xla if backend == "tensorflow" else None,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+",
                        default=[1024, 2048])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS))
    parser.add_argument("--implementations", nargs="+",
                        default=["auto", *IMPLEMENTATIONS],
                        choices=["auto", *IMPLEMENTATIONS, *EFFICIENT])
    parser.add_argument("--dtype-policy", default="float32",
                        choices=("float32", "mixed_bfloat16",
                                 "mixed_float16"))
    parser.add_argument("--no-mask", action="store_true",
                        help="pass no padding mask (default: all ones)")
    parser.add_argument("--no-xla", action="store_true",
                        help="TensorFlow: the step without XLA, as fit "
                        "runs it on a CPU (default: jit_compile=True)")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="options of the efficient attentions' layer, "
                        "e.g. sparse_pattern=strided reformer_chunk_size=64")
    parser.add_argument("--child", nargs=2, metavar=("IMPL", "LENGTH"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = child(args.child[0], int(args.child[1]), args.batch,
                       args.hidden, args.heads, args.repeats,
                       args.dtype_policy, not args.no_mask,
                       parse_overrides(args.set), not args.no_xla)
        print("RESULT " + json.dumps(result))
        return
    print(f"batch {args.batch}, hidden {args.hidden}, heads {args.heads}, "
          f"{args.dtype_policy}, "
          f"{'no padding mask' if args.no_mask else 'an all-ones mask'}"
          f"{'; TensorFlow without XLA' if args.no_xla else ''}; "
          "one forward+backward step of RotaryMultiHeadAttention")
    print(f"{'backend':<11}{'L':>6} {'path':<10}{'ms':>9}{'GFLOP/s':>9}"
          f"{'% matmul':>9}{'peak MiB':>10}{'x fused time':>14}"
          f"{'x fused mem':>13}")
    growth = {}
    for backend in args.backends:
        for length in args.lengths:
            rows = {}
            for impl in args.implementations:
                cmd = [sys.executable, __file__, "--child", impl,
                       str(length), "--batch", str(args.batch), "--hidden",
                       str(args.hidden), "--heads", str(args.heads),
                       "--repeats", str(args.repeats), "--dtype-policy",
                       args.dtype_policy, *(["--no-mask"] if args.no_mask
                                            else []),
                       *(["--no-xla"] if args.no_xla else []),
                       *(["--set", *args.set] if args.set else [])]
                env = {**os.environ, "KERAS_BACKEND": backend,
                       "TF_CPP_MIN_LOG_LEVEL": "3"}
                out = subprocess.run(cmd, env=env, capture_output=True,
                                     text=True)
                lines = [ln for ln in out.stdout.splitlines()
                         if ln.startswith("RESULT ")]
                if not lines:
                    print(f"{backend:<11}{length:>6} {impl:<10} failed: "
                          f"{out.stderr.strip().splitlines()[-1:]}")
                    continue
                rows[impl] = json.loads(lines[0][7:])
                growth.setdefault((backend, impl), []).append(
                    (length, rows[impl]["growth_mib"]))
            base = rows.get("fused")
            for impl, r in rows.items():
                label = impl if impl != "auto" else f"auto={r['resolved']}"
                t_ratio = r["seconds"] / base["seconds"] if base else 0
                m_ratio = r["growth_mib"] / max(base["growth_mib"], 1) \
                    if base else 0
                gflops, share = ("-", "-") if r["gflops"] is None else (
                    f"{r['gflops']:.1f}",
                    f"{100 * r['gflops'] / r['matmul_gflops']:.0f}")
                print(f"{backend:<11}{length:>6} {label:<10}"
                      f"{r['seconds'] * 1e3:>9.0f}{gflops:>9}{share:>9}"
                      f"{r['growth_mib']:>10.0f}{t_ratio:>14.2f}"
                      f"{m_ratio:>13.2f}", flush=True)
    if len(args.lengths) > 1:
        print("\nmemory growth exponent between successive lengths "
              "(1: linear in L, 2: quadratic)")
        for (backend, impl), points in growth.items():
            exponents = [
                math.log(max(m2, 1) / max(m1, 1)) / math.log(l2 / l1)
                for (l1, m1), (l2, m2) in zip(points, points[1:])]
            print(f"{backend:<11}{impl:<10}"
                  + " ".join(f"{e:5.2f}" for e in exponents))


if __name__ == "__main__":
    main()
