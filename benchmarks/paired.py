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
