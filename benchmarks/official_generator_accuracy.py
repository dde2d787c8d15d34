"""Trained on our generated data: the same accuracy on the official samples?

Usage:

    mkdir -p /tmp/lraref
    git -C <clone of google-research/long-range-arena> archive HEAD \\
        | tar -x -C /tmp/lraref
    KERAS_BACKEND=torch taskset -c 1 python \\
        benchmarks/official_generator_accuracy.py --task listops \\
        --official /tmp/lraref [--samples 2000] [--seed 0] [--alpha 0.05] \\
        RUN_DIR...

    KERAS_BACKEND=... python benchmarks/official_generator_accuracy.py \\
        --task pathfinder --official /tmp/pf_official RUN_DIR...

A RUN_DIR is a finished run (`model.keras`, `config.json`, `metrics.json`)
or a directory holding runs, searched as `python -m lra_keras.report`
searches them (`report.find_runs`); unfinished runs are skipped with a
note. Evaluate a run under the backend it was trained with.

`--official` is a checkout of the official generator, imported from there,
never copied:

- ListOps: google-research/long-range-arena (`lra_benchmarks/data/
  listops.py`, run as its `main` with the flags `--num_train_samples 0
  --num_valid_samples 0 --num_test_samples N` and its tree flags set as
  the run's trees were drawn (`official_generator_flags`: LRA's, its
  defaults, for a run on release files; for generated data `max_length`
  = the run's `sequence_length` and its `min_length` and `max_depth`
  where set, e.g. the quick preset's shorter trees), after
  `random.seed(--seed)`; the script seeds nothing itself).
  It writes its TSV files into a temporary folder, removed afterwards;
  `basic_test.tsv` holds the N trees and is read with our reader
  (`listops.read_tsv`, at the run's `sequence_length`), so the
  tokenisation is ours. The script imports `absl` and
  `tensorflow.compat.v1` for its flags, `tf.logging` and
  `tf.io.gfile.GFile`: all of them still work under TensorFlow 2.21 and
  absl-py 2.5, so nothing is put back; without TensorFlow installed, a
  stand-in module gives `tf.logging.info` (Python's logging) and
  `tf.io.gfile.GFile` (`open`), which is all the script uses. absl-py is
  needed.
- Pathfinder: drewlinsley/pathfinder at commit ab9c130, run by
  `benchmarks/pathfinder_fidelity.py`'s driver (`official_samples`, with
  its shims) at the run's resolution and difficulty; its PNGs, in
  metadata order with the metadata's labels, flattened row by row into
  uint8 pixel tokens (what `pathfinder.read_official` returns for them).
  `difficulty="all"` generates N images of each difficulty.

For each run: the model is loaded (`lra_keras.saving.load_model`, safe
mode), and evaluated on

- our test split, loaded as the run loaded it (`training.load_splits` with
  the run's `config.json`), and the recomputed accuracy is checked against
  `metrics.json`'s `test_accuracy`;
- the official samples;

both through the run's own test batches (`training.make_batches` with the
run's hyperparameters: length buckets, batch size), the predicted class
being the logits' argmax. It prints, per sample set, its size, the
majority-class rate and, for ListOps, the root-operator rule (the first
token is the root operator; predicting MIN -> 0, MAX -> 9, MED -> 5,
SM -> 4 is right on about 35% of LRA trees), the modal label per root
operator and the token lengths; then per run the two accuracies, their
difference (official - ours), its 95% interval (Wald, unpooled), the
two-sided p-value of the pooled two-proportion z-test, and (ListOps) the
share of the model's predictions that are the root rule's on each set.

It exits with status 1 if a recomputed test accuracy differs from
`metrics.json`'s by a prediction or more, or a run's difference is
significant at `--alpha` (default 0.05) after Bonferroni's correction over
the runs (p < alpha / runs).

Measured (PyTorch backend, CPU, the small preset's ListOps runs of commit
8f15dc3 finished by then: S4D seeds 0-2, Transformer seeds 0 and 1;
`--samples 2000 --seed 0`; 271 s on one core shared with two trainings,
2.0 GB peak: our test split loaded in 11 s (`load_splits` reads the
training split too), 2000 official trees in 12 s, 24 s per S4D, 85 s per
Transformer):

    sample set         n  majority  root rule  length mean [min, max]
    our test split  2000     0.172      0.350       1033 [501, 1996]
    official        2000     0.169      0.357       1061 [501, 1995]

    run                  ours    official    diff      95% CI          p
    s4d seed 0          0.3650    0.3660  +0.0010  [-0.029, +0.031]  0.95
    s4d seed 1          0.3530    0.3515  -0.0015  [-0.031, +0.028]  0.92
    s4d seed 2          0.3600    0.3615  +0.0015  [-0.028, +0.031]  0.92
    transformer seed 0  0.3550    0.3540  -0.0010  [-0.031, +0.029]  0.95
    transformer seed 1  0.3505    0.3575  +0.0070  [-0.023, +0.037]  0.64

Each model scores the same on the official trees as on our test split
(every recomputed test accuracy is metrics.json's), at the root rule's
level on both (0.350, 0.357). Share of the predictions that are the
rule's, our set / official: S4D 0.64-0.66 / 0.64-0.66, Transformer seed 0
0.49 / 0.49, seed 1 1.00 / 1.00 (it learned the rule exactly, so its
accuracies are the rule's). The modal label per root is the same on both
sets (MIN 0, MAX 9, MED 4, SM 1; the rule's MED -> 5 and SM -> 4 are not
the modes). The mean lengths differ by 28 tokens (2.2 standard errors) on
these 2000; on 10,000 trees of each generator (official `--seed 7`, ours
seed 11) they are 1034 and 1041 (s.d. 395, 398; Kolmogorov-Smirnov
p = 0.46) and the labels agree (chi-square p = 0.82), so that was chance.

Pathfinder was run only on a tiny model (quick Transformer, width 16, one
block, one epoch on 320 generated images: chance, 0.500 on its 40 test
images, 0.485 on 400 official ones, whose majority class is 0.515); the
official generator took 0.24 s per hard 32-pixel image on the shared core.
"""

import argparse
import contextlib
import importlib.util
import io
import logging
import math
import os
import pathlib
import random
import statistics
import sys
import tempfile
import time
import types

import numpy as np

# Runs from a checkout without installing the package.
HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from lra_keras.data import listops  # noqa: E402
from lra_keras.data.listops.loader import _GENERATOR_DEFAULTS  # noqa: E402
from lra_keras.report import ReportError  # noqa: E402
from lra_keras.report import find_runs  # noqa: E402
from lra_keras.report import read_run  # noqa: E402

TASKS = ("listops", "pathfinder")

# The root-operator rule of README (*Quick start*, *Results*): right for
# 35% of LRA test trees, the level the small models reach. (MIN and MAX
# of 2-10 arguments, mostly uniform digits, are most often 0 and 9; the
# truncated median and the sum mod 10 are spread out, so their values
# here matter less: a few points of the 25% of trees each has.)
ROOT_RULE = {"[MIN": 0, "[MAX": 9, "[MED": 5, "[SM": 4}

# === Statistics (numpy only) ===


def majority_rate(y):
    """Share of the most frequent label."""
    y = np.asarray(y)
    return float(np.bincount(y).max() / len(y))


def root_rule_predictions(x):
    """The root rule's class per ListOps row, -1 where the first token is
    not an operator."""
    table = np.full(listops.VOCABULARY_SIZE, -1, np.int64)
    for operator, value in ROOT_RULE.items():
        table[listops.VOCABULARY.index(operator)] = value
    return table[np.asarray(x)[:, 0]]


def root_rule_accuracy(x, y):
    """Share of rows whose label is the root rule's prediction."""
    return float(np.mean(root_rule_predictions(x) == np.asarray(y)))


def modal_label_by_root(x, y):
    """{operator: (share of roots, modal label, its share among them)}."""
    first, y = np.asarray(x)[:, 0], np.asarray(y)
    out = {}
    for operator in ROOT_RULE:
        rows = first == listops.VOCABULARY.index(operator)
        if rows.any():
            counts = np.bincount(y[rows], minlength=listops.NUM_CLASSES)
            out[operator] = (float(rows.mean()), int(counts.argmax()),
                             float(counts.max() / rows.sum()))
    return out


def token_lengths(x, padding_id):
    """Real tokens per row (up to the last non-padding token)."""
    real = np.asarray(x) != padding_id
    return np.where(real.any(axis=1),
                    real.shape[1] - np.argmax(real[:, ::-1], axis=1), 0)


def two_proportion_test(k1, n1, k2, n2, confidence=0.95):
    """Compares k2/n2 with k1/n1 (independent samples).

    Returns a dict: `difference` (k2/n2 - k1/n1), `z` and `p_value` of the
    two-sided pooled z-test (pooled proportion p, standard error
    sqrt(p (1 - p) (1/n1 + 1/n2))), and `ci`, the Wald interval
    difference ± z_(1+confidence)/2 · sqrt(p1 (1 - p1)/n1 + p2 (1 - p2)/n2).
    Equal proportions of 0 or 1 (no variance) give z = 0 and p = 1.
    """
    if not (0 <= k1 <= n1 and 0 <= k2 <= n2 and n1 > 0 and n2 > 0):
        raise ValueError(f"Need 0 <= k <= n, n > 0. Received: k1={k1}, "
                         f"n1={n1}, k2={k2}, n2={n2}")
    p1, p2 = k1 / n1, k2 / n2
    difference = p2 - p1
    pooled = (k1 + k2) / (n1 + n2)
    se_pooled = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se_pooled == 0:
        z, p_value = 0.0, 1.0
    else:
        z = difference / se_pooled
        p_value = math.erfc(abs(z) / math.sqrt(2))
    quantile = statistics.NormalDist().inv_cdf((1 + confidence) / 2)
    half = quantile * math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    return dict(difference=difference, z=z, p_value=p_value,
                ci=(difference - half, difference + half))


# === The official samples ===


def _tensorflow_stand_in():
    """`tensorflow.compat.v1` as far as the ListOps script uses it."""
    log = logging.getLogger("lra_benchmarks.data.listops")
    v1 = types.ModuleType("tensorflow.compat.v1")
    v1.logging = types.SimpleNamespace(info=log.info)
    v1.io = types.SimpleNamespace(gfile=types.SimpleNamespace(GFile=open))
    compat = types.ModuleType("tensorflow.compat")
    compat.v1 = v1
    tf = types.ModuleType("tensorflow")
    tf.compat = compat
    return {"tensorflow": tf, "tensorflow.compat": compat,
            "tensorflow.compat.v1": v1}


_LISTOPS_MODULE = "lra_official_listops"


def _official_listops_module(checkout):
    """`lra_benchmarks/data/listops.py` of the checkout, imported once."""
    path = pathlib.Path(checkout, "lra_benchmarks", "data",
                        "listops.py").resolve()
    module = sys.modules.get(_LISTOPS_MODULE)
    if module is not None:
        if pathlib.Path(module.__file__).resolve() != path:
            raise RuntimeError(f"{_LISTOPS_MODULE} is already imported from "
                               f"{module.__file__}, not {path}")
        return module, module._lra_tensorflow
    try:
        import tensorflow.compat.v1 as tf

        tensorflow = f"TensorFlow {tf.__version__}"
    except ImportError:
        sys.modules.update(_tensorflow_stand_in())
        tensorflow = "TensorFlow stand-in (logging, open)"
    spec = importlib.util.spec_from_file_location(_LISTOPS_MODULE, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[_LISTOPS_MODULE] = module
    try:
        spec.loader.exec_module(module)  # defines its absl flags
    except BaseException:
        del sys.modules[_LISTOPS_MODULE]
        raise
    module._lra_tensorflow = tensorflow
    return module, tensorflow


# The official script's tree flags (`lra_benchmarks/data/listops.py`
# lines 36-47) at LRA's values, which are its defaults and our generator's
# (the loader's defaults; a test pins them to the script's).
LRA_TREES = {key: _GENERATOR_DEFAULTS[key]
             for key in ("max_depth", "max_args", "max_length", "min_length")}


def official_generator_flags(hp, data_dir):
    """The official script's tree flags for the trees a run trained on.

    A run on release files (`data_dir`) read LRA's trees. A run that
    generated its data drew them with `max_length` = its
    `sequence_length` (trees strictly shorter, as the official script's
    `length < max_length`) and its `min_length` and `max_depth` where set:
    the quick preset's shorter trees come from the official script with
    the same flags.
    """
    if data_dir is not None:
        return dict(LRA_TREES)
    return dict(
        LRA_TREES, max_length=hp["sequence_length"],
        **{key: hp[key] for key in ("min_length", "max_depth")
           if hp.get(key) is not None})


def official_listops(checkout, num_samples, seed, max_length, trees=None):
    """N trees of the official script, read with our reader.

    `trees`: the script's tree flags (`LRA_TREES` keys), every one passed
    (absl keeps a flag's last parsed value); `None`: LRA's.

    Returns `(x, y, note)`: `x` int32 (N, max_length) token ids, `y` int32
    labels, `note` naming the TensorFlow used.
    """
    trees = dict(LRA_TREES, **(trees or {}))
    official, tensorflow = _official_listops_module(checkout)
    state = random.getstate()
    with tempfile.TemporaryDirectory(prefix="listops_official_") as folder:
        official.FLAGS([
            "listops", f"--output_dir={folder}", "--task=basic",
            "--num_train_samples=0", "--num_valid_samples=0",
            f"--num_test_samples={num_samples}",
            *(f"--{key}={value}" for key, value in sorted(trees.items())),
        ])
        random.seed(seed)
        try:
            # It prints "Processed <k>" every 1000 trees.
            with contextlib.redirect_stdout(io.StringIO()):
                official.main(["listops"])
        finally:
            random.setstate(state)
        x, y = listops.read_tsv(pathlib.Path(folder, "basic_test.tsv"),
                                max_length=max_length)
    if len(y) != num_samples:
        raise RuntimeError(f"the official script wrote {len(y)} trees, "
                           f"not {num_samples}")
    return x, y, tensorflow


def _sibling(name):
    """A module of benchmarks/ (the folder of this file), imported once."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name,
                                                      HERE / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def official_pathfinder(checkout, num_samples, seed, resolution,
                        difficulties):
    """N images per difficulty of the official generator (ab9c130).

    Returns `(x, y, note)`: `x` uint8 (N, resolution**2) pixel tokens row
    by row, `y` int32 labels, `note` naming the shims.
    """
    fidelity = _sibling("pathfinder_fidelity")
    note = fidelity._install_shims()
    xs, ys = [], []
    for difficulty in difficulties:
        images, info = fidelity.official_samples(
            checkout, resolution, difficulty, num_samples, seed)
        xs.append(images.reshape(len(images), -1))
        ys.append(np.array([entry["label"] for entry in info], np.int32))
    return np.concatenate(xs), np.concatenate(ys), note


def official_sample_set(task, checkout, num_samples, seed, hp,
                        data_dir=None, trees=None):
    """The official samples in the form of the run's test split.

    `trees`: ListOps' tree flags, if already computed
    (`official_generator_flags(hp, data_dir)` otherwise)."""
    if task == "listops":
        if trees is None:
            trees = official_generator_flags(hp, data_dir)
        x, y, note = official_listops(
            checkout, num_samples, seed, hp["sequence_length"], trees)
        if hp.get("append_eos"):  # as `load_splits` ends the run's trees
            from lra_keras.tasks import get_task
            from lra_keras.training.inputs import append_end_token

            x = append_end_token(x, get_task(task).end_id)
        return x, y, note
    resolution = math.isqrt(hp["sequence_length"])
    difficulty = hp.get("difficulty") or "hard"
    from lra_keras.data.pathfinder import DIFFICULTIES

    difficulties = list(DIFFICULTIES) if difficulty == "all" else [difficulty]
    return official_pathfinder(checkout, num_samples, seed, resolution,
                               difficulties)


# === Our test split, and a model's predictions ===


def our_test_split(task, hp, data_dir):
    """The run's test split, loaded as `training.run` loads it."""
    from lra_keras.training import load_splits

    return load_splits(task, hp, data_dir)["test"]


def predict_classes(model, x, y, hp):
    """The model's class per row, through the run's test batches."""
    from lra_keras.techniques.base import predicted_classes
    from lra_keras.training import make_batches

    batches = make_batches(x, y, hp)
    predicted = np.full(len(x), -1, np.int64)
    for index in range(len(batches)):
        inputs, _ = batches[index]
        logits = np.asarray(model.predict_on_batch(inputs))
        predicted[batches.batches[index]] = predicted_classes(logits)
    return predicted


# === The comparison ===


def describe_set(task, name, x, y, padding_id):
    """One sample set's statistics (a dict)."""
    info = dict(name=name, n=len(y), majority=majority_rate(y))
    if task == "listops":
        lengths = token_lengths(x, padding_id)
        info.update(root_rule=root_rule_accuracy(x, y),
                    roots=modal_label_by_root(x, y),
                    length_mean=float(lengths.mean()),
                    length_min=int(lengths.min()),
                    length_max=int(lengths.max()))
    return info


def _data_key(task, hp, data_dir):
    # What decides the test split that `load_splits` returns.
    from lra_keras.tasks import get_task

    options = {k: hp.get(k) for k in get_task(task).loader_options}
    return repr((task, str(data_dir), hp["sequence_length"],
                 hp.get("test_samples"), hp.get("append_eos"),
                 sorted(options.items())))


def _official_key(task, hp, trees):
    # `trees`: ListOps' tree flags (`official_generator_flags`), or None.
    return repr((task, hp["sequence_length"], hp.get("difficulty"),
                 hp.get("append_eos"),
                 sorted(trees.items()) if trees else None))


def compare_runs(task, checkout, run_dirs, num_samples=2000, seed=0,
                 log=print):
    """Evaluates every finished run at or below `run_dirs`.

    Returns a dict: `sets`, {key: set statistics (`describe_set`)}, and
    `runs`, one dict per run: `path`, `ours` and `official` (correct, n,
    accuracy, root-rule agreement of the predictions, key of the sample
    set), `recorded` (metrics.json's test accuracy) and `test`
    (`two_proportion_test(ours, official)`). `arrays` keeps the sample
    sets' `(x, y)` and `predictions` each run's predicted classes.
    """
    from lra_keras.saving import load_model

    finished, unfinished = find_runs(run_dirs)
    for run_dir in unfinished:
        log(f"skipped {run_dir}: unfinished (no metrics.json)")
    if not finished:
        raise ReportError(f"No finished run in {', '.join(map(str, run_dirs))}")
    runs = [read_run(run_dir) for run_dir in finished]
    for run in runs:
        if run["group"]["task"] != task:
            raise ReportError(f"{run['path']} is a {run['group']['task']} "
                              f"run, not {task}")
        if not run["config"].get("hparams"):
            raise ReportError(f"{run['path']} has no config.json hparams")
    sets, arrays, results, predictions = {}, {}, [], {}
    for run in runs:
        hp = run["config"]["hparams"]
        data_dir = run["config"].get("data_dir")
        trees = (official_generator_flags(hp, data_dir)
                 if task == "listops" else None)
        ours_key = "ours " + _data_key(task, hp, data_dir)
        official_key = "official " + _official_key(task, hp, trees)
        if ours_key not in arrays:
            start = time.perf_counter()
            x, y = our_test_split(task, hp, data_dir)
            arrays[ours_key] = (x, y)
            sets[ours_key] = describe_set(task, "our test split", x, y,
                                          hp.get("padding_id"))
            log(f"our test split ({len(y)} rows, {data_dir or 'generated'})"
                f" loaded in {time.perf_counter() - start:.1f} s")
        if official_key not in arrays:
            start = time.perf_counter()
            x, y, note = official_sample_set(task, checkout, num_samples,
                                             seed, hp, data_dir, trees)
            arrays[official_key] = (x, y)
            sets[official_key] = describe_set(task, "official", x, y,
                                              hp.get("padding_id"))
            log(f"official samples: {len(y)} (seed {seed}) from {checkout} "
                f"({note}) in {time.perf_counter() - start:.1f} s")
            if trees and trees["max_length"] > hp["sequence_length"]:
                cut = int(np.sum(token_lengths(x, hp.get("padding_id"))
                                 == hp["sequence_length"]))
                log(f"note: {cut} of the official trees "
                    f"({trees['min_length'] + 1}-{trees['max_length'] - 1} "
                    f"tokens) reach the run's sequence_length "
                    f"{hp['sequence_length']}, cut there, as the run's "
                    "release files were")
            elif trees and trees != LRA_TREES:
                log("official trees drawn as the run's: "
                    + " ".join(f"{k}={v}" for k, v in sorted(trees.items())))
        start = time.perf_counter()
        model = load_model(pathlib.Path(run["path"]) / "model.keras",
                           compile=False)
        result = dict(path=run["path"],
                      recorded=float(run["metrics"]["test_accuracy"]))
        for side, key in (("ours", ours_key), ("official", official_key)):
            x, y = arrays[key]
            predicted = predict_classes(model, x, y, hp)
            predictions[(str(run["path"]), side)] = predicted
            correct = int(np.sum(predicted == y))
            result[side] = dict(
                key=key, correct=correct, n=len(y),
                accuracy=correct / len(y),
                root_agreement=(float(np.mean(
                    predicted == root_rule_predictions(x)))
                    if task == "listops" else None),
            )
        ours, official = result["ours"], result["official"]
        result["recorded_correct"] = round(result["recorded"] * ours["n"])
        result["test"] = two_proportion_test(
            ours["correct"], ours["n"], official["correct"], official["n"])
        results.append(result)
        log(f"{run['path']}: evaluated in {time.perf_counter() - start:.1f} s")
    return dict(sets=sets, runs=results, arrays=arrays,
                predictions=predictions)


def _run_label(path):
    parts = pathlib.Path(path).parts
    return "/".join(parts[-2:]) if len(parts) >= 2 else str(path)


def sets_table(task, sets):
    header = f"  {'sample set':<16} {'n':>6} {'majority':>9}"
    if task == "listops":
        header += f" {'root rule':>10} {'length mean [min, max]':>24}"
    lines = [header]
    for info in sets.values():
        line = f"  {info['name']:<16} {info['n']:>6} {info['majority']:>9.3f}"
        if task == "listops":
            span = (f"{info['length_mean']:.0f} [{info['length_min']}, "
                    f"{info['length_max']}]")
            line += f" {info['root_rule']:>10.3f} {span:>24}"
        lines.append(line)
    if task == "listops":
        lines.append("  root operator: share of roots, modal label (its "
                     "share among them)")
        for info in sets.values():
            cells = ", ".join(
                f"{op[1:]} {share:.2f} -> {label} ({hit:.2f})"
                for op, (share, label, hit) in info["roots"].items())
            lines.append(f"    {info['name']:<16} {cells}")
    return "\n".join(lines)


def _accuracy_cell(side):
    return f"{side['accuracy']:.4f} ({side['n']})"


def runs_table(task, results):
    header = (f"  {'run':<34} {'ours (n)':>15} {'official (n)':>15} "
              f"{'diff':>7} {'95% CI':>17} {'p':>6}")
    if task == "listops":
        header += f" {'root-rule agreement':>20}"
    lines = [header]
    for r in results:
        ours, official, test = r["ours"], r["official"], r["test"]
        ci = f"[{test['ci'][0]:+.3f}, {test['ci'][1]:+.3f}]"
        line = (f"  {_run_label(r['path']):<34} "
                f"{_accuracy_cell(ours):>15} "
                f"{_accuracy_cell(official):>15} "
                f"{test['difference']:+7.4f} {ci:>17} "
                f"{test['p_value']:6.3f}")
        if task == "listops":
            agreement = (f"{ours['root_agreement']:.2f} / "
                         f"{official['root_agreement']:.2f}")
            line += f" {agreement:>20}"
        lines.append(line)
    return "\n".join(lines)


def failures(results, alpha):
    """What makes the exit status 1: (run, reason) pairs."""
    failed = []
    for r in results:
        if r["recorded_correct"] != r["ours"]["correct"]:
            failed.append((r["path"], (
                f"recomputed test accuracy {r['ours']['accuracy']:.4f} "
                f"({r['ours']['correct']}/{r['ours']['n']}) is not "
                f"metrics.json's {r['recorded']:.4f}")))
        if r["test"]["p_value"] < alpha / len(results):
            failed.append((r["path"], (
                f"official - ours = {r['test']['difference']:+.4f}, "
                f"p = {r['test']['p_value']:.2g} < {alpha:g}/"
                f"{len(results)}")))
    return failed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", required=True, choices=TASKS)
    parser.add_argument("--official", required=True, type=pathlib.Path,
                        help="checkout of the official generator")
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    args = parser.parse_args(argv)
    expected = {"listops": "lra_benchmarks/data/listops.py",
                "pathfinder": "snakes2.py"}[args.task]
    if not (args.official / expected).is_file():
        parser.error(f"no {expected} in --official {args.official}")
    if args.samples < 1:
        parser.error(f"--samples must be >= 1. Received: {args.samples}")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    start = time.perf_counter()
    try:
        out = compare_runs(args.task, args.official, args.run_dirs,
                           args.samples, args.seed)
    except ReportError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    import keras

    print(f"\n{args.task}: official samples vs our test split "
          f"({keras.backend.backend()} backend, "
          f"{time.perf_counter() - start:.0f} s)")
    print(sets_table(args.task, out["sets"]))
    print()
    print(runs_table(args.task, out["runs"]))
    print("  diff: official - ours; 95% CI: Wald, unpooled; p: two-sided "
          "pooled two-proportion z-test"
          + ("; root-rule agreement: share of predictions that are the "
             "root rule's, ours / official" if args.task == "listops"
             else ""))
    failed = failures(out["runs"], args.alpha)
    if failed:
        for path, why in failed:
            print(f"FAILED: {path}: {why}")
        return 1
    runs = len(out["runs"])
    print(f"OK: every recomputed test accuracy is metrics.json's, and no "
          f"difference is significant at {args.alpha:g} (Bonferroni over "
          f"{runs} run{'s' * (runs != 1)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
