"""Throughput of the ListOps generator with the LRA parameters.

Usage:

    python benchmarks/listops_generator.py [--num-samples N] [--workers W]

Prints trees per second with one worker and with W workers (default: every
available CPU), their ratio, the projected time of the 100k-tree LRA set,
and the acceptance rate of the length window (accepted draws / draws,
before removing repeated trees). The multi-worker time includes starting the
worker processes, as a user would see it.
"""

import argparse
import pathlib
import sys
import time

# Runs from a checkout without installing the package.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from lra_keras.data import listops  # noqa: E402
from lra_keras.data._checks import available_cpus  # noqa: E402
from lra_keras.data.listops import generator  # noqa: E402


def measure(num_samples, num_workers, seed):
    # Force the pool even for short runs, so that W workers are measured.
    generator._POOL_MIN_SECONDS = 0.0
    start = time.perf_counter()
    rows = listops.generate(num_samples, seed, num_workers=num_workers)
    seconds = time.perf_counter() - start
    if len(rows) != num_samples:
        raise RuntimeError(f"Expected {num_samples} rows, got {len(rows)}")
    return num_samples / seconds


def acceptance_rate(num_chunks, seed):
    params = generator._generator_params(
        max_depth=10,
        max_args=10,
        min_length=500,
        max_length=2000,
        operator_probability=0.25,
    )
    accepted = sum(
        len(generator._generate_chunk(seed, i, params))
        for i in range(num_chunks)
    )
    return accepted / (num_chunks * generator._CHUNK_DRAWS)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--num-samples", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    workers = args.workers or available_cpus()

    one = measure(args.num_samples, 1, args.seed)
    many = measure(args.num_samples, workers, args.seed + 1)
    rate = acceptance_rate(20, args.seed)
    print(f"samples per run: {args.num_samples}")
    print(f"1 worker:  {one:8.0f} trees/s")
    print(f"{workers} workers: {many:8.0f} trees/s  ({many / one:.2f}x)")
    print(
        f"projected 100k: {100_000 / one:.1f} s with 1 worker, "
        f"{100_000 / many:.1f} s with {workers}"
    )
    print(f"acceptance rate: {rate:.1%} of draws in (500, 2000)")


if __name__ == "__main__":
    main()
