"""Training, evaluation and saving of one LRA run, shared by every recipe.

`run(task, hp)` loads the task's splits, builds the model from the resolved
hyperparameters, trains it with `model.fit` (resumable: an interrupted run
restarted with the same `out_dir` continues from its last finished epoch),
restores the weights of the best validation epoch, evaluates on the test
split and writes a run directory:

    <out_dir>/config.json     resolved hyperparameters, backend, versions
    <out_dir>/metrics.csv     one row per epoch (loss, accuracy, val_*, lr)
    <out_dir>/metrics.json    final test metrics, best epoch, wall time
    <out_dir>/model.keras     the evaluated model

and, unless disabled, `<saved_models>/<name>.keras` with a `<name>.json`
card, and a TensorFlow SavedModel in `<saved_models>/<name>/`.
"""

import csv
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import keras

from lra_keras import data
from lra_keras.backend_utils import list_devices
from lra_keras.batching import LengthBucketedBatches
from lra_keras.batching import padding_mask
from lra_keras.callbacks import ReduceOnTrainingPlateau
from lra_keras.hparams import get_hparams
from lra_keras.models import build_classifier
from lra_keras.optimizers import ScheduledAdamW

# Regular expressions searched in variable names (TensorFlow prefixes the
# layer path, hence "(^|/)"). The state-space / EMA dynamics are named
# "ssm_*" and "ema_*" by their layers; they train without weight decay, as
# in the S4 and MEGA code, and at `ssm_learning_rate` when it is set.
SSM_WEIGHTS = ("(^|/)ssm_", "(^|/)ema_")
# Norm scales and offsets and biases get no weight decay either.
WEIGHT_DECAY_EXCLUDED = ("bias", "gamma", "beta") + SSM_WEIGHTS

SCHEDULES = ("constant", "cosine", "plateau")


def make_schedule(hp, total_steps):
    """Learning rate: constant or cosine decay, after a linear warmup.

    "plateau" has the constant shape here; its reductions come from
    `ScheduledAdamW` and `ReduceOnTrainingPlateau` (see `make_optimizer`).
    """
    peak = float(hp["learning_rate"])
    warmup = int(hp.get("warmup_steps") or 0)
    schedule = hp.get("schedule", "constant")
    if schedule not in SCHEDULES:
        raise ValueError(
            f"`schedule` must be one of {SCHEDULES}. "
            f"Received: schedule={schedule!r}"
        )
    if schedule != "cosine" and warmup == 0:
        return peak
    return keras.optimizers.schedules.CosineDecay(
        initial_learning_rate=0.0 if warmup else peak,
        decay_steps=max(1, total_steps - warmup),
        # alpha=1 keeps the rate at its peak after warmup: "constant".
        alpha=0.0 if schedule == "cosine" else 1.0,
        warmup_target=peak if warmup else None,
        warmup_steps=warmup,
    )


def make_optimizer(hp, total_steps):
    """AdamW; norms, biases and SSM/EMA dynamics get no weight decay.

    With `ssm_learning_rate`, the SSM/EMA weights train at that rate
    (times the same schedule shape). With `schedule="plateau"` (YCTFS
    A.2), the rate is also multiplied by `final_decay_factor` over the
    last `final_decay_fraction` of the `total_steps`, and the callbacks of
    `make_callbacks` lower it on training-loss plateaus.
    """
    peak = float(hp["learning_rate"])
    ssm_rate = hp.get("ssm_learning_rate")
    multipliers = {}
    if ssm_rate is not None:
        if not float(ssm_rate) > 0 or not peak > 0:
            raise ValueError(
                "`learning_rate` and `ssm_learning_rate` must be positive. "
                f"Received: learning_rate={peak}, "
                f"ssm_learning_rate={ssm_rate}"
            )
        multipliers = {p: float(ssm_rate) / peak for p in SSM_WEIGHTS}
    final_decay_step = None
    if hp.get("schedule") == "plateau":
        fraction = float(hp.get("final_decay_fraction", 0.1))
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(
                "`final_decay_fraction` must be in [0, 1]. "
                f"Received: final_decay_fraction={fraction}"
            )
        # The reference trains int(0.9 * steps) steps at the full rate
        # (SequentialLR milestone, constant_w_cooldown.yaml).
        final_decay_step = int(round((1.0 - fraction) * total_steps, 6))
    return ScheduledAdamW(
        learning_rate=make_schedule(hp, total_steps),
        weight_decay=float(hp.get("weight_decay") or 0.0),
        global_clipnorm=hp.get("gradient_clipnorm"),
        rate_multipliers=multipliers,
        final_decay_step=final_decay_step,
        final_decay_factor=float(hp.get("final_decay_factor", 0.1))
        if final_decay_step is not None else 1.0,
        weight_decay_excluded=list(WEIGHT_DECAY_EXCLUDED),
    )


def make_callbacks(hp):
    """The schedule's callbacks (place them before `BackupAndRestore`)."""
    if hp.get("schedule") != "plateau":
        return []
    return [
        ReduceOnTrainingPlateau(
            factor=float(hp.get("plateau_factor", 0.2)),
            patience=int(hp.get("plateau_patience", 4)),
            min_learning_rate=float(hp.get("plateau_min_learning_rate",
                                           1e-7)),
        )
    ]


def model_inputs(x, hp):
    """Token array (N, L) or pairs (N, 2, L) -> the models' input dict."""
    return {
        "token_ids": x.astype("int32"),
        "padding_mask": padding_mask(x, hp.get("padding_id")),
    }


def load_splits(task, hp, data_dir=None):
    """Loads {split: (x, y)}; `<split>_samples` keeps a prefix of a split."""
    options = {k: hp[k] for k in data.LOADER_OPTIONS.get(task, ())
               if hp.get(k) is not None}
    splits = {}
    for split in data.SPLITS:
        x, y = data.load(
            task, split, data_dir=data_dir, max_length=hp["sequence_length"],
            **options,
        )
        keep = hp.get(f"{split}_samples")
        if keep:
            x, y = x[:keep], y[:keep]
        splits[split] = (x, y)
    return splits


def make_batches(x, y, hp, shuffle=False, seed=0):
    """Length-bucketed batches of one split (see `lra_keras.batching`)."""
    return LengthBucketedBatches(
        x, y, batch_size=hp["batch_size"], padding_id=hp.get("padding_id"),
        bucket_step=hp.get("bucket_step"), shuffle=shuffle, seed=seed,
    )


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


def _environment():
    return dict(
        backend=keras.backend.backend(),
        keras_version=keras.__version__,
        python=platform.python_version(),
        machine=platform.machine(),
        devices=list_devices(),
        commit=_git_commit(),
    )


def _write_json(path, obj):
    tmp = Path(f"{path}.tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=str) + "\n")
    os.replace(tmp, path)


def _val_accuracies(out_dir):
    """Validation accuracy of every logged epoch, resumed ones included."""
    path = Path(out_dir) / "metrics.csv"
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return [float(row["val_accuracy"]) for row in csv.DictReader(f)]


def run_name(hp):
    suffix = "" if hp["preset"] == "paper" else f"_{hp['preset']}"
    return f"{hp['task']}_{hp['model']}{suffix}"


def run(
    task,
    hp=None,
    *,
    data_dir=None,
    out_dir=None,
    saved_models_dir="saved_models",
    export=True,
    seed=0,
    verbose="auto",
    callbacks=(),
):
    """Trains, evaluates and saves one model. Returns (model, metrics).

    `callbacks` are added after the run's own (schedule, backup, CSV log,
    best checkpoint).
    """
    hp = dict(hp) if hp is not None else get_hparams(task)
    name = run_name(hp)
    out_dir = Path(out_dir or Path("runs") / name)
    out_dir.mkdir(parents=True, exist_ok=True)
    backup_dir = out_dir / "backup"
    resuming = backup_dir.exists()
    if not resuming and (out_dir / "metrics.csv").exists():
        (out_dir / "metrics.csv").unlink()
    keras.utils.set_random_seed(seed)
    environment = _environment()
    _write_json(
        out_dir / "config.json",
        dict(hparams=hp, seed=seed, data_dir=data_dir, argv=sys.argv,
             **environment),
    )

    started = time.time()
    splits = load_splits(task, hp, data_dir)
    x_train, y_train = splits["train"]
    train = make_batches(x_train, y_train, hp, shuffle=True, seed=seed)
    val = make_batches(*splits["val"], hp)
    test = make_batches(*splits["test"], hp)
    print(
        f"{task}: {len(y_train)} train / {len(splits['val'][1])} val / "
        f"{len(splits['test'][1])} test rows of length "
        f"{hp['sequence_length']}; backend {environment['backend']}",
        flush=True,
    )
    model = build_classifier(**hp)
    model.compile(
        optimizer=make_optimizer(hp, len(train) * hp["epochs"]),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    best_path = out_dir / "best.weights.h5"
    # After a resume, only an epoch better than those already logged may
    # replace the best checkpoint.
    best_so_far = max(_val_accuracies(out_dir), default=None)
    # The schedule's callbacks come first: their state must be updated
    # before BackupAndRestore writes the epoch's backup.
    run_callbacks = make_callbacks(hp) + [
        keras.callbacks.BackupAndRestore(str(backup_dir)),
        keras.callbacks.CSVLogger(str(out_dir / "metrics.csv"), append=True),
        keras.callbacks.ModelCheckpoint(
            str(best_path),
            monitor="val_accuracy",
            mode="max",
            save_best_only=True,
            save_weights_only=True,
            initial_value_threshold=best_so_far,
        ),
    ]
    run_callbacks += list(callbacks)
    if resuming:
        print(f"Resuming from {backup_dir}", flush=True)
    fit_started = time.time()
    model.fit(
        train,
        epochs=hp["epochs"],
        validation_data=val,
        callbacks=run_callbacks,
        verbose=verbose,
    )
    fit_seconds = time.time() - fit_started
    if best_path.exists():
        model.load_weights(str(best_path))
    test = model.evaluate(test, return_dict=True, verbose=0)
    val_acc = _val_accuracies(out_dir)
    metrics = dict(
        task=task,
        model=hp["model"],
        preset=hp["preset"],
        test_accuracy=float(test["accuracy"]),
        test_loss=float(test["loss"]),
        best_val_accuracy=max(val_acc, default=float("nan")),
        epochs_run=len(val_acc),
        wall_seconds=round(time.time() - started, 1),
        fit_seconds=round(fit_seconds, 1),
        num_parameters=int(model.count_params()),
        **environment,
    )
    model_path = out_dir / "model.keras"
    model.save(str(model_path))
    _write_json(out_dir / "metrics.json", metrics)
    if saved_models_dir:
        save_model_card(
            model_path, hp, metrics, Path(saved_models_dir), name, export
        )
    print(
        f"test accuracy: {metrics['test_accuracy']:.4f} "
        f"({task}, {hp['model']}, {hp['preset']} preset, "
        f"{environment['backend']}, {metrics['wall_seconds']:.0f} s)",
        flush=True,
    )
    return model, metrics


def save_model_card(model_path, hp, metrics, saved_models_dir, name, export):
    """Copies the model to `saved_models/` with a JSON card and SavedModel."""
    saved_models_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(model_path, saved_models_dir / f"{name}.keras")
    _write_json(
        saved_models_dir / f"{name}.json", dict(hparams=hp, metrics=metrics)
    )
    if export:
        from lra_keras.export import export_saved_model

        export_saved_model(model_path, saved_models_dir / name)
