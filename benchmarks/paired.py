"""Variants timed in turn in one process, for comparisons on a machine
whose speed drifts between runs (a shared 2-core one moved a step by up
to 1.8x between rounds): each variant once a round, the order reversed
every other round, and each round's ratio of one variant's time to
another's. The scripts of `docs/results/` that pair two versions of a
step or a kernel take their rounds from here.
"""

import contextlib
import statistics
import time


def in_turn(calls, rounds):
    """{name: [seconds of each round]}: each of `calls` ({name: a
    callable}) once a round, in their order in even rounds and reversed
    in odd ones."""
    times = {name: [] for name in calls}
    for i in range(rounds):
        for name in (list(calls) if i % 2 == 0 else list(calls)[::-1]):
            start = time.perf_counter()
            calls[name]()
            times[name].append(time.perf_counter() - start)
    return times


def ratios(times, first, second):
    """(median, lowest, highest) of the rounds' `first` ÷ `second`."""
    each = [a / b for a, b in zip(times[first], times[second])]
    return statistics.median(each), min(each), max(each)


def medians(times):
    """{name: the median of its rounds' seconds}."""
    return {name: statistics.median(t) for name, t in times.items()}


@contextlib.contextmanager
def swapped(module, name, value):
    """`module.name` set to `value` inside the block and put back after
    it, even when the block raises: the variant of a rule (a layout, a
    transform length) a step is traced or run with."""
    kept = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, kept)


def under_values(module, name, values, call, rounds):
    """{variant: [seconds of each round]}: `call()` with `module.name`
    set to each of `values` ({variant: value}, `swapped`), the variants
    in turn (`in_turn`) after one untimed call of each."""
    calls = {}
    for variant, value in values.items():
        def run(value=value):
            with swapped(module, name, value):
                call()
        run()
        calls[variant] = run
    return in_turn(calls, rounds)


def summary(times, first, second):
    """`first` and `second`'s medians in ms and the median of the
    rounds' `first` ÷ `second` with its range, as one line."""
    median = medians(times)
    ratio, low, high = ratios(times, first, second)
    return (f"{first} {median[first] * 1e3:.1f} ms, {second} "
            f"{median[second] * 1e3:.1f} ms, {first} / {second} "
            f"{ratio:.3f} ({low:.3f}-{high:.3f})")


def print_under_values(label, module, name, values, call, rounds, first,
                       second):
    """`under_values`, printed as one line: `label`, then `summary` of
    the variants `first` and `second`, and the rounds."""
    times = under_values(module, name, values, call, rounds)
    print(f"{label}: {summary(times, first, second)}, {rounds} rounds",
          flush=True)


def stack_steps(models, length=1024, batch=16, quick_batches=10):
    """[(label, call)]: one `train_on_batch` of `mixers.py`'s 4-block
    stack of each of `models`, `length` positions, `batch` rows, width
    128, no padding mask (as `reference_speed.py` runs ours), then the
    quick ListOps S4D's `train_on_batch` on `quick_batches` of its first
    60 batches that are 32 x 32 tokens: the steps the paired scripts of
    `docs/results/` time. Built under the backend Keras runs, seeded."""
    import keras
    import mixers
    from preset_step import _batch_shape
    from preset_step import recipe_run

    steps = []
    for model in models:
        keras.utils.set_random_seed(0)
        net, x, y = mixers.stack_and_batch(model, length, 128, 4, batch,
                                           padded=False)
        net.compile(*mixers.optimizer_and_loss())
        steps.append((f"{model} stack, L = {length}, batch {batch}",
                      lambda net=net, x=x, y=y: net.train_on_batch(x, y)))
    _, _, train, _, net = recipe_run("listops", "s4d", "quick")
    batches = [train[i] for i in range(min(60, len(train)))]
    same = [b for b in batches if _batch_shape(b) == (32, 32)]
    same = same[:quick_batches]
    steps.append((f"quick step, {len(same)} batches of 32 x 32",
                  lambda: [net.train_on_batch(*b) for b in same]))
    return steps
