"""The small-kernel convolution's training step, direct against the FFT.

    python benchmarks/conv_block.py [--backends jax tensorflow torch]
        [--batch 32] [--length 1024] [--width 64] [--intermediate 128]
        [--kernel-size 61] [--groups 32] [--steps 5]

`ConvBlock` computes a grouped convolution through the FFT
(`implementation="auto"`, `lra_keras.layers.fft_conv.grouped_fft_conv`)
because `keras.ops.conv` with groups is slow on a CPU under JAX and
TensorFlow. This times one training step (`train_on_batch`: forward,
backward, SGD update) of a model that is one `ConvBlock` and a mean, with
`implementation="direct"` and `"fft"`, in one subprocess per backend, and
prints each step and the direct step's multiple of the FFT's (> 1: the
FFT is faster). The defaults are YCTFS's Pathfinder layer (32 groups,
K = 61) at the small preset's width (64, to 128 channels) and batch (32).
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mixers  # noqa: E402 (benchmarks/: run_child)

IMPLEMENTATIONS = ("direct", "fft")


def child(args):
    """{implementation: {"step_s": the median step's seconds, "first_s":
    the first step's, compilation included}} under this process's
    backend."""
    import keras
    import numpy as np

    from lra_keras.layers.conv_block import ConvBlock

    rng = np.random.default_rng(0)
    x = rng.normal(size=(args.batch, args.length, args.width))
    x = x.astype("float32")
    y = np.zeros((args.batch,), "float32")
    result = {}
    for implementation in IMPLEMENTATIONS:
        keras.utils.set_random_seed(0)
        inputs = keras.Input((args.length, args.width))
        h = ConvBlock(kernel_size=args.kernel_size,
                      intermediate_dim=args.intermediate,
                      groups=args.groups,
                      implementation=implementation)(inputs)
        model = keras.Model(inputs, keras.ops.mean(h, axis=(1, 2)))
        model.compile(optimizer=keras.optimizers.SGD(1e-3), loss="mse")
        start = time.perf_counter()
        model.train_on_batch(x, y)  # compiles
        first = time.perf_counter() - start
        times = []
        for _ in range(args.steps):
            start = time.perf_counter()
            model.train_on_batch(x, y)
            times.append(time.perf_counter() - start)
        result[implementation] = dict(step_s=statistics.median(times),
                                      first_s=first)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", nargs="*",
                        default=list(mixers.BACKENDS))
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=1024)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--intermediate", type=int, default=128)
    parser.add_argument("--kernel-size", type=int, default=61)
    parser.add_argument("--groups", type=int, default=32)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument("--child", action="store_true",
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print("RESULT " + json.dumps(child(args)), flush=True)
        return
    extra = ["--child"] + [
        f"--{key.replace('_', '-')}={getattr(args, key)}"
        for key in ("batch", "length", "width", "intermediate",
                    "kernel_size", "groups", "steps")]
    script = str(Path(__file__).resolve())
    results = mixers.run_backends(args, extra, script)
    print(f"\nConvBlock training step: batch {args.batch}, L = "
          f"{args.length}, width {args.width} to {args.intermediate}, K = "
          f"{args.kernel_size}, {args.groups} groups, median of "
          f"{args.steps}\n")
    print("| backend | direct step (s) | FFT step (s) | direct / FFT |")
    print("|---|---|---|---|")
    for backend, r in results.items():
        if "error" in r:
            print(f"| {backend} | {r['error']} | | |")
            continue
        direct, fft = r["direct"]["step_s"], r["fft"]["step_s"]
        print(f"| {backend} | {direct:.3f} | {fft:.3f} | "
              f"{direct / fft:.2f} |")


if __name__ == "__main__":
    main()
