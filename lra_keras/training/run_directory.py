"""The run directory: what a run writes, and whether it may resume.

    <out_dir>/config.json     resolved hyperparameters, backend, versions
    <out_dir>/metrics.csv     one row per epoch (loss, accuracy, val_*, lr)
    <out_dir>/metrics.json    final test metrics, best epoch, wall time
    <out_dir>/model.keras     the evaluated model
    <out_dir>/backup/         Keras's BackupAndRestore state while running
    <out_dir>/pretrain/       the self-pretraining phase (technique "spt")

and, unless disabled, `<saved_models>/<name>.keras` with a `<name>.json`
card, and a TensorFlow SavedModel in `<saved_models>/<name>/`.
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


def run_name(hp):
    """`<task>_<model>[_<technique>][_augment][_<preset>]`."""
    name = f"{hp['task']}_{hp['model']}"
    if hp.get("technique", "none") != "none":
        name += f"_{hp['technique']}"
    if hp.get("augment"):
        name += "_augment"
    if hp["preset"] != "paper":
        name += f"_{hp['preset']}"
    return name


def _git_commit():
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


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


def check_resumable(out_dir, hp):
    """A run directory may only be resumed with its own hyperparameters."""
    path = Path(out_dir) / "config.json"
    if not path.exists():
        return
    saved = json.loads(path.read_text()).get("hparams", {})
    current = json.loads(json.dumps(hp, default=str))
    differ = sorted(k for k in set(saved) | set(current)
                    if saved.get(k) != current.get(k))
    if differ:
        raise ValueError(
            f"{out_dir} holds an interrupted run with other "
            f"hyperparameters (differing keys: {differ}). Resume it with "
            "the same settings, or pass another --out (or delete the "
            "directory) to start a new run."
        )


def save_model_card(model_path, hp, metrics, saved_models_dir, name, export):
    """Copies the model to `saved_models/` with a JSON card and SavedModel."""
    saved_models_dir = Path(saved_models_dir)
    with atomic_path(saved_models_dir / f"{name}.keras") as temporary:
        shutil.copyfile(model_path, temporary)
    write_json(
        saved_models_dir / f"{name}.json", dict(hparams=hp, metrics=metrics)
    )
    if export:
        from lra_keras.export import export_saved_model

        export_saved_model(model_path, saved_models_dir / name)
