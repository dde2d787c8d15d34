"""The run directory: what a run writes, and whether it may resume.

    <out_dir>/config.json     resolved hyperparameters, backend, versions
    <out_dir>/metrics.csv     one row per epoch (loss, accuracy, val_*, lr)
    <out_dir>/metrics.json    final test metrics, best epoch, wall time
    <out_dir>/model.keras     the evaluated model
    <out_dir>/backup/         the training state until metrics.json is
                              written (training.resume)
    <out_dir>/pretrain/       the self-pretraining phase (technique "spt")
    <out_dir>/tensorboard/    TensorBoard logs, if asked for (`--tensorboard`)

and, unless disabled, `<saved_models>/<name>.keras` with a `<name>.json`
card, and a TensorFlow SavedModel in `<saved_models>/<name>/`. The
default `<out_dir>` is `runs/<name>` (`default_out_dir`).
"""

import csv
import json
import platform
import shutil
import subprocess
from pathlib import Path

import keras

from lra_keras._atomic import atomic_path
from lra_keras._atomic import write_json
from lra_keras.backend_utils import list_devices
from lra_keras.hparams import COMMON_KEYS
from lra_keras.hparams import run_name  # noqa: F401 (re-exported)


def default_out_dir(hp):
    """`runs/<run_name(hp)>`, relative to the working directory."""
    return Path("runs") / run_name(hp)


def _git_commit(where=Path(__file__).parent):
    """The short commit of the checkout holding `where`, `+modified` when
    tracked files differ from it (the code that ran is then not that
    commit's); "" outside git."""

    def git(*args):
        return subprocess.run(
            ["git", *args], capture_output=True, text=True, cwd=where,
            timeout=5,
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
    except (OSError, subprocess.SubprocessError):
        return ""
    try:
        # --no-optional-locks: no index lock against a parallel run's git
        if commit and git("--no-optional-locks", "status", "--porcelain",
                          "--untracked-files=no"):
            commit += "+modified"
    except (OSError, subprocess.SubprocessError):
        commit += "+unknown"
    return commit


def environment():
    """Backend, versions, devices and commit of this process."""
    return dict(
        backend=keras.backend.backend(),
        keras_version=keras.__version__,
        python=platform.python_version(),
        machine=platform.machine(),
        devices=list_devices(),
        commit=_git_commit(),
    )


def val_accuracies(out_dir, key="val_accuracy"):
    """Validation accuracy of every logged epoch, resumed ones included."""
    path = Path(out_dir) / "metrics.csv"
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return [float(row[key]) for row in csv.DictReader(f)]


class RunDirectoryError(ValueError):
    """The run directory holds another run, or is not a directory."""


# What a run writes into its directory; `--overwrite` removes these (and
# nothing else the user may have put there).
# `time_limit_minutes` stopped the run's training (`training.run`).
TIME_LIMIT_MARKER = "time_limit_reached.json"
RUN_FILES = ("config.json", "metrics.csv", "metrics.json", "model.keras",
             "best.weights.h5", "swa.weights.h5", "backup", "pretrain",
             "tensorboard", "curriculum", TIME_LIMIT_MARKER)
# What a run stopped before its first backup leaves: nothing to resume.
NOT_STARTED = {"config.json", "tensorboard"}


def _settings(hp, seed, data_dir):
    return json.loads(json.dumps(
        dict(hparams=hp, seed=seed,
             data_dir=None if data_dir is None else str(data_dir)),
        default=str,
    ))


def _differing(saved, current):
    # The differing hyperparameters by name, then "seed" and "data_dir". A
    # common or family key the saved row lacks (added to lra_keras after
    # that run started, e.g. dtype_policy, binary_logit) differs only if
    # the current value is not its default, the behaviour the earlier run
    # had.
    from lra_keras.models.families import FAMILIES

    a, b = saved.get("hparams") or {}, current["hparams"]
    family = FAMILIES.get(b.get("model"))
    defaults = {**COMMON_KEYS, **(family.keys if family else {})}
    a = {**{k: defaults[k] for k in b if k in defaults and k not in a},
         **a}
    differ = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return differ + [k for k in ("seed", "data_dir")
                     if saved.get(k) != current[k]]


def prepare(out_dir, hp, *, seed=0, data_dir=None, overwrite=False):
    """Checks `out_dir` before a run; returns the metrics of a finished run.

    - A new or empty directory: returns None (train).
    - An interrupted run (`backup/`, `pretrain/` or `curriculum/`
      without `metrics.json`) with the same hyperparameters, seed and data:
      returns None (resume).
    - A finished run (`metrics.json`) with the same settings: returns its
      metrics; nothing is trained or overwritten.
    - Either with other settings: `RunDirectoryError` naming the keys.
    - `overwrite=True` removes a previous run's files (`RUN_FILES`) first.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise RunDirectoryError(
            f"The run directory {out_dir} is a file; pass another --out."
        )
    present = [name for name in RUN_FILES if (out_dir / name).exists()]
    if set(present) <= NOT_STARTED:
        present = []  # stopped before training: nothing to resume or keep
    if not present:
        return None
    if overwrite:
        for name in present:
            path = out_dir / name
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
        return None
    config = out_dir / "config.json"
    saved = json.loads(config.read_text()) if config.exists() else {}
    differ = _differing(saved, _settings(hp, seed, data_dir))
    finished = (out_dir / "metrics.json").exists()
    if differ:
        what = "a finished" if finished else "an interrupted"
        raise RunDirectoryError(
            f"{out_dir} holds {what} run with other settings (differing: "
            f"{', '.join(differ)}). Pass another --out for a new run, "
            "--overwrite to replace it"
            + ("" if finished else ", or the same settings to resume it")
            + "."
        )
    if finished:
        return json.loads((out_dir / "metrics.json").read_text())
    return None


def save_model_card(model_path, hp, metrics, saved_models_dir, name):
    """Copies the model to `saved_models/` with a JSON card (the
    SavedModel beside it is `export.export_saved_model`'s)."""
    saved_models_dir = Path(saved_models_dir)
    with atomic_path(saved_models_dir / f"{name}.keras") as temporary:
        shutil.copyfile(model_path, temporary)
    write_json(
        saved_models_dir / f"{name}.json", dict(hparams=hp, metrics=metrics)
    )
