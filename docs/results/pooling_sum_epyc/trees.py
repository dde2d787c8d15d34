"""Two checkouts' training steps paired: one worker process per checkout,
each with its `benchmarks/mixers.py` stack compiled, their steps taken
in turn.

    KERAS_BACKEND=jax python trees.py OLD NEW MODEL ROUNDS L BATCH

Two trees' code cannot share one process (one `lra_keras` a process), and
this machine's steps move by up to 1.8x between minutes, so separate
runs one after the other do not compare. Here both workers are built
first, then asked for one step each in turn (the order swapped every
round), so both see the same minutes. Prints both medians and the median
of the rounds' NEW / OLD (> 1: NEW is slower) with their range. Pairing
a tree with a copy of itself read 1.009 (0.888-1.083), 8 rounds of the
Transformer at L = 1,024, batch 16.

The worker: `python trees.py --worker ROOT MODEL L BATCH`, reading a line
per step from stdin and writing the step's seconds.
"""

import statistics
import subprocess
import sys
import time


def worker(root, model, length, batch):
    sys.path.insert(0, root)
    sys.path.insert(0, root + "/benchmarks")
    import keras
    import mixers

    import lra_keras

    assert lra_keras.__file__.startswith(root), lra_keras.__file__
    keras.utils.set_random_seed(0)
    net, x, y = mixers.stack_and_batch(model, length, 128, 4, batch,
                                       padded=False)
    optimizer, loss = mixers.optimizer_and_loss()
    net.compile(optimizer=optimizer, loss=loss)
    for _ in range(2):
        net.train_on_batch(x, y)
    print("ready", flush=True)
    for _ in sys.stdin:
        start = time.perf_counter()
        net.train_on_batch(x, y)
        print(time.perf_counter() - start, flush=True)


def main():
    if sys.argv[1] == "--worker":
        root, model, length, batch = sys.argv[2:6]
        return worker(root, model, int(length), int(batch))
    old, new, model, rounds, length, batch = sys.argv[1:7]
    workers = {}
    for root in (old, new):
        process = subprocess.Popen(
            [sys.executable, __file__, "--worker", root, model, length,
             batch], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True)
        while process.stdout.readline().strip() != "ready":
            pass
        workers[root] = process
    times = {old: [], new: []}
    for i in range(int(rounds)):
        for root in ((old, new) if i % 2 == 0 else (new, old)):
            workers[root].stdin.write("step\n")
            workers[root].stdin.flush()
            times[root].append(float(workers[root].stdout.readline()))
    for process in workers.values():
        process.stdin.close()
        process.wait()
    ratios = sorted(b / a for a, b in zip(times[old], times[new]))
    print(f"{model} L={length} batch {batch}: old "
          f"{statistics.median(times[old]):.3f} s, new "
          f"{statistics.median(times[new]):.3f} s, new / old "
          f"{statistics.median(ratios):.3f} ({ratios[0]:.3f}-"
          f"{ratios[-1]:.3f}), {rounds} rounds")


if __name__ == "__main__":
    main()
