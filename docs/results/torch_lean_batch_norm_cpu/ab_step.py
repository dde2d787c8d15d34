"""The A/B timer of this folder's runs: one `mixers.py` stack's training
step, the median of N `train_on_batch` calls after 2 untimed, and the
minor page faults of the median step.

    N=15 R=<checkout> KERAS_BACKEND=torch python ab_step.py rtf 1024

R is the checkout whose `lra_keras` and `benchmarks` are timed (two
worktrees, alternated, for an A/B); 16,384 tokens a batch.
"""

import os
import resource
import sys
import time

R = os.environ.get("R", ".")
sys.path.insert(0, os.path.join(R, "benchmarks"))
sys.path.insert(0, R)

import mixers  # noqa: E402 (from the checkout R)


def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def main():
    model, length = sys.argv[1], int(sys.argv[2])
    net, x, y = mixers.stack_and_batch(model, length, 128, 4,
                                       16384 // length)
    optimizer, loss = mixers.optimizer_and_loss()
    net.compile(optimizer=optimizer, loss=loss)
    for _ in range(2):
        net.train_on_batch(x, y)
    times, faulted = [], []
    for _ in range(int(os.environ.get("N", 7))):
        before, start = faults(), time.perf_counter()
        net.train_on_batch(x, y)
        times.append(time.perf_counter() - start)
        faulted.append(faults() - before)
    middle = len(times) // 2
    pages = sorted(faulted)[middle]
    print(model, length, os.environ.get("KERAS_BACKEND"), "median",
          round(sorted(times)[middle], 4), "min", round(min(times), 4),
          "faults/step", pages, "=MiB", pages * 4 / 1024)


if __name__ == "__main__":
    main()
