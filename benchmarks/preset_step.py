"""A preset's training steps as a recipe runs them, per backend.

    python benchmarks/preset_step.py [--task listops] [--model s4d]
        [--preset quick] [--set key=value ...] [--steps 60]
        [--backends jax tensorflow torch] [--data-dir DIR] [--fit]
        [--rounds 1]

`mixers.py` times one stack on one batch shape; this benchmark times what
a recipe's `model.fit` does with a preset: the same resolved row, the same
data (the task's cached or generated training split), the same length
buckets in the same shuffled order, the model and optimiser built and
compiled as `lra_keras.training.run` builds them (`Technique.build`,
`make_optimizer`, `Technique.compile`). In one subprocess per backend it
calls `train_on_batch` on the first `--steps` training batches and splits
their time in two:

- the step: the median time of the batches whose shape came before
  (nothing to compile), and their median tokens per second;
- the compilation: what the first batch of each new shape took beyond
  its tokens at that rate, summed (JAX and TensorFlow compile a step per
  shape; PyTorch runs eagerly unless `jit_compile=True`).

It prints each backend's step, tokens per second, number of shapes and
compilation time, and the step as a multiple of the fastest backend's
(its time per token over the fastest's; the aim: every backend within
1.2x). Data loading is left
out: batches are made before the timing, as `fit` prefetches them.

On a machine whose speed drifts (a shared 2-core one moved this
command's ratios by tens of percent between runs), `--rounds N` runs the
backends in turn N times, each round starting one backend later; the
table gives each backend's median round, and a line per backend its
ratio to the fastest within each round.

With `--fit` the child then builds the model again (same seed) and runs
`model.fit` on the same batches in the same order, as an uninterrupted
recipe does (the `PyDataset` itself, one epoch of `--steps` batches,
without the recipe's own callbacks: backup, checkpoint, CSV log): a
batch's time there runs from the end of the batch before, so it counts
the data, the train function `fit` builds and its callbacks. The table
adds that step, its ratio to `train_on_batch`'s (how far the number
above is from what a recipe's progress bar shows) and the largest
difference between the two models' weights after their steps, 0 up to
rounding when `fit` trained the same batches in the same order.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mixers  # noqa: E402 (benchmarks/: run_child)

BACKENDS = mixers.BACKENDS


def _parse_set(items):
    from lra_keras.cli import parse_overrides

    return parse_overrides(items or [])


def recipe_run(task, model, preset, overrides=None, data_dir=None,
               seed=0):
    """What a recipe trains, built as `lra_keras.training.run` builds it:
    (the resolved row, its `Technique`, the training batches (a
    `PyDataset`), the planned steps, the compiled model), seeded with
    `seed`."""
    import keras

    from lra_keras import techniques
    from lra_keras.hparams import get_hparams
    from lra_keras.training.inputs import load_splits
    from lra_keras.training.inputs import run_batches
    from lra_keras.training.optimization import make_optimizer
    from lra_keras.training.run import planned_steps

    hp = get_hparams(task, model, preset, **(overrides or {}))
    technique = techniques.get_technique(hp.get("technique", "none"))
    keras.utils.set_random_seed(seed)
    splits = load_splits(task, hp, data_dir)
    train, _, _ = run_batches(task, splits, hp, technique, seed=seed)
    _, total_steps = planned_steps(hp, len(train))
    net = technique.build(hp)
    technique.compile(net, make_optimizer(hp, total_steps), hp)
    return hp, technique, train, total_steps, net


def child(task, model, preset, overrides, steps, data_dir, seed=0,
          fit=False):
    """Times the first `steps` training batches of a run; a dict. With
    `fit`, also `model.fit` on the same batches (a second model, built
    and seeded alike): the `fit_` keys."""
    import keras

    from lra_keras.training.optimization import make_optimizer

    hp, technique, train, total_steps, net = recipe_run(
        task, model, preset, overrides, data_dir, seed)
    batches = [train[i] for i in range(min(steps, len(train)))]
    steps = len(batches)
    shapes = [_batch_shape(batch) for batch in batches]
    records = []
    for (x, y), shape in zip(batches, shapes):
        start = time.perf_counter()
        net.train_on_batch(x, y)
        records.append((shape, time.perf_counter() - start))
    result = dict(summarize(records), batch_size=hp["batch_size"])
    if fit:
        stepped = [keras.ops.convert_to_numpy(w) for w in net.weights]
        keras.utils.set_random_seed(seed)
        net = technique.build(hp)
        technique.compile(net, make_optimizer(hp, total_steps), hp)
        # The epoch pinned at 0, as the recipe's `EpochSync` pins it: else
        # `fit`'s first `on_epoch_end()` would reshuffle the batches.
        train.set_epoch(0)
        timer = batch_end_times()
        net.fit(train, epochs=1, steps_per_epoch=steps, shuffle=False,
                verbose=0, callbacks=[timer])
        # A batch's time: from the end of the one before (the first from
        # the start of `fit`), its data and callbacks included.
        seconds = [b - a for a, b in zip(timer.times, timer.times[1:])]
        fitted = summarize(list(zip(shapes, seconds)))
        result.update({f"fit_{key}": value for key, value in fitted.items()})
        # Zero when fit trained the same batches in the same order.
        result["fit_weight_difference"] = max(
            float(np.max(np.abs(keras.ops.convert_to_numpy(w) - v)))
            for w, v in zip(net.weights, stepped))
    return result


def _batch_shape(batch):
    """(rows, length) of a batch's token ids."""
    x = batch[0]
    rows = next(iter(x.values())) if isinstance(x, dict) else x
    return tuple(rows.shape)


def batch_end_times():
    """A Keras callback whose `times` are when `fit` began and when each
    of its training batches ended (the loss read as a number first, so
    that a step dispatched asynchronously, as under JAX, counts when it
    is done, not when it is queued). Made here, not at import, so that
    the parent process never imports Keras."""
    import keras

    class BatchEnds(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.times = [time.perf_counter()]

        def on_train_batch_end(self, batch, logs=None):
            float(logs["loss"])
            self.times.append(time.perf_counter())

    return BatchEnds()


def summarize(records):
    """[(batch shape, seconds)] of consecutive steps -> a dict: `step_s`,
    the median time of the steps whose shape came before (nothing to
    compile); `tokens_per_s`, their median rate; `shapes`; `compile_s`,
    what each shape's first step took beyond its tokens at that rate,
    summed; `steps` and `total_s`, every step's time."""
    seen, first, repeated, rates = set(), [], [], []
    for shape, seconds in records:
        if shape in seen:
            repeated.append(seconds)
            rates.append(shape[0] * shape[1] / seconds)
        else:
            seen.add(shape)
            first.append((shape[0] * shape[1], seconds))
    if not repeated:
        raise ValueError("every batch had a new shape: pass more --steps")
    rate = statistics.median(rates)
    return dict(
        step_s=statistics.median(repeated), tokens_per_s=rate,
        shapes=len(seen),
        compile_s=sum(seconds - tokens / rate for tokens, seconds in first),
        steps=len(records), total_s=sum(t for _, t in records))


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="listops")
    parser.add_argument("--model", default="s4d")
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--backends", nargs="*", default=list(BACKENDS))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--fit", action="store_true",
                        help="also time model.fit on the same batches")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the backends in turn this many times; "
                        "the table gives each one's median round")
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument("--child", action="store_true",
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        result = child(args.task, args.model, args.preset,
                       _parse_set(args.set), args.steps, args.data_dir,
                       fit=args.fit)
        print("RESULT " + json.dumps(result), flush=True)
        return
    _parse_set(args.set)  # a bad --set fails here, not in every child
    extra = ["--child", "--task", args.task, "--model", args.model,
             "--preset", args.preset, "--steps", str(args.steps),
             *(["--data-dir", args.data_dir] if args.data_dir else []),
             *(["--fit"] if args.fit else []),
             *(["--set", *args.set] if args.set else [])]
    script = str(Path(__file__).resolve())
    rounds = []
    for r in range(args.rounds):
        # Each round starts one backend later, so that none is always
        # first on a machine that drifts.
        shift = r % max(len(args.backends), 1)
        order = args.backends[shift:] + args.backends[:shift]
        done = mixers.run_backends(argparse.Namespace(
            **{**vars(args), "backends": order}), extra, script)
        rounds.append({backend: done[backend] for backend in args.backends})
    results = {backend: median_round([done[backend] for done in rounds])
               for backend in args.backends}
    rates = [r["tokens_per_s"] for r in results.values() if "step_s" in r]
    fastest = max(rates, default=None)
    print(f"\n{args.task}, {args.model}, {args.preset} preset"
          f"{' ' + ' '.join(args.set) if args.set else ''}: the first "
          f"{args.steps} training batches\n")
    fit = any("fit_step_s" in r for r in results.values())
    print("| backend | step (s) | tokens/s | x fastest | shapes | "
          "compile (s) | total (s) |"
          + (" fit step (s) | fit / step | weights, max diff |"
             if fit else ""))
    print("|---|---|---|---|---|---|---|" + ("---|---|---|" if fit else ""))
    for backend, r in results.items():
        if "step_s" not in r:
            print(f"| {backend} | {r.get('error')} | | | | | |"
                  + (" | | |" if fit else ""))
            continue
        row = (f"| {backend} | {r['step_s']:.3f} | {r['tokens_per_s']:,.0f}"
               f" | {fastest / r['tokens_per_s']:.2f} | {r['shapes']} | "
               f"{r['compile_s']:.1f} | {r['total_s']:.1f} |")
        if fit:
            row += (f" {r['fit_step_s']:.3f} | "
                    f"{r['fit_step_s'] / r['step_s']:.2f} | "
                    f"{r['fit_weight_difference']:.1e} |")
        print(row)
    if args.rounds > 1:
        print("\nx fastest in each round (that round's fastest rate):")
        for backend in args.backends:
            print(f"- {backend}: " + ", ".join(
                _times_fastest(done, backend) for done in rounds))


def median_round(results):
    """Of one backend's results over the rounds, the one with the median
    rate (the lower of the two middle ones for an even count); an error
    only if no round ended well."""
    good = sorted((r for r in results if "step_s" in r),
                  key=lambda r: r["tokens_per_s"])
    return good[(len(good) - 1) // 2] if good else results[-1]


def _times_fastest(done, backend):
    rates = [r["tokens_per_s"] for r in done.values() if "step_s" in r]
    if "step_s" not in done[backend]:
        return done[backend].get("error", "failed")
    return f"{max(rates) / done[backend]['tokens_per_s']:.2f}"


if __name__ == "__main__":
    main()
