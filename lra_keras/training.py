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
import numpy as np

from lra_keras import data
from lra_keras import techniques
from lra_keras.backend_utils import list_devices
from lra_keras.batching import LengthBucketedBatches
from lra_keras.batching import padding_mask
from lra_keras.callbacks import ReduceOnTrainingPlateau
from lra_keras.data.image import load_cifar10_rgb
from lra_keras.data.pathfinder import DIFFICULTIES as PATHFINDER_DIFFICULTIES
from lra_keras.hparams import TECHNIQUES
from lra_keras.hparams import get_hparams
from lra_keras.models import build_classifier
from lra_keras.models import build_pretrainer
from lra_keras.optimizers import AdamW
from lra_keras.optimizers import ScheduledAdamW
from lra_keras.saving import save_model

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
    adamw = dict(
        learning_rate=make_schedule(hp, total_steps),
        weight_decay=float(hp.get("weight_decay") or 0.0),
        global_clipnorm=hp.get("gradient_clipnorm"),
    )
    if not multipliers and final_decay_step is None:
        # Keras's own class is fused under PyTorch (only that exact class,
        # about 10% faster per step than a subclass there), where its
        # gradients are dense anyway; elsewhere ours, which makes the
        # sparse Embedding gradients of TensorFlow dense (AdamW docstring).
        plain = (keras.optimizers.AdamW if keras.backend.backend() == "torch"
                 else AdamW)
        optimizer = plain(**adamw)
        optimizer.exclude_from_weight_decay(
            var_names=list(WEIGHT_DECAY_EXCLUDED)
        )
        return optimizer
    return ScheduledAdamW(
        **adamw,
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
    """Loads {split: (x, y)}; `<split>_samples` keeps a prefix of a split.

    Pathfinder tasks train on `train_difficulty` (val and test stay on
    `difficulty`); with "all", `train_samples` is kept from each of the
    three sets, as YCTFS trains on three times the hard set's size. With
    `augment` the Image training split holds the colour images, flattened
    to (N, 32 * 32 * 3), which the augmentation turns into grayscale
    sequences batch by batch (`lra_keras.techniques.make_augment`).
    """
    options = {k: hp[k] for k in data.LOADER_OPTIONS.get(task, ())
               if hp.get(k) is not None}
    splits = {}
    for split in data.SPLITS:
        keep = hp.get(f"{split}_samples")
        split_options = dict(options)
        if split == "train" and hp.get("train_difficulty"):
            split_options["difficulty"] = hp["train_difficulty"]
        parts = [split_options]
        if split_options.get("difficulty") == "all":
            parts = [dict(split_options, difficulty=d)
                     for d in PATHFINDER_DIFFICULTIES]
        xs, ys = [], []
        for part in parts:
            if split == "train" and task == "image" and hp.get("augment"):
                x, y = load_cifar10_rgb(split, data_dir=data_dir)
                x = x.reshape(len(x), -1)
            else:
                x, y = data.load(
                    task, split, data_dir=data_dir,
                    max_length=hp["sequence_length"], **part,
                )
            if keep:
                x, y = x[:keep], y[:keep]
            xs.append(x)
            ys.append(y)
        if len(xs) == 1:
            splits[split] = (xs[0], ys[0])
        else:
            splits[split] = (np.concatenate(xs), np.concatenate(ys))
    return splits


def make_batches(x, y, hp, shuffle=False, seed=0, *, objective=None,
                 training=False, batch_size=None):
    """Batches of one split for the run's technique.

    Length-bucketed (`lra_keras.batching`), then, when the run augments or
    has a token objective, transformed by
    `lra_keras.techniques.TechniqueBatches`: `training=True` augments and
    corrupts; validation and test batches stay clean.
    """
    batches = LengthBucketedBatches(
        x, y, batch_size=batch_size or hp["batch_size"],
        padding_id=hp.get("padding_id"),
        bucket_step=hp.get("bucket_step"), shuffle=shuffle, seed=seed,
    )
    augment = None
    if training and hp.get("augment"):
        augment = techniques.make_augment(
            hp["task"], seed=seed, d4=hp.get("augment_d4", True)
        )
    if objective is None and augment is None:
        return batches
    if objective == "multitask":
        mask_rate = hp["multitask_mask_rate"]
        random_fraction = hp["multitask_random_fraction"]
        loss_positions = hp["multitask_loss_positions"]
    else:  # SPT: NTFS masks without random replacements, loss at masks
        mask_rate, random_fraction = hp["spt_mask_rate"], 0.0
        loss_positions = "masked"
    return techniques.TechniqueBatches(
        batches, hp["task"], objective=objective, augment=augment,
        mask_rate=mask_rate, random_fraction=random_fraction,
        loss_positions=loss_positions,
        # L1 pixel regression is a pretraining head; the multitask token
        # head always predicts ids.
        pixel_targets=(objective in ("masked", "causal")
                       and hp.get("pretrain_loss") == "l1"),
        training=training, seed=seed,
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


def _val_accuracies(out_dir, key="val_accuracy"):
    """Validation accuracy of every logged epoch, resumed ones included."""
    path = Path(out_dir) / "metrics.csv"
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return [float(row[key]) for row in csv.DictReader(f)]


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


def _check_resumable(out_dir, hp):
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


def compile_classifier(model, hp, total_steps):
    """Compiles a `build_classifier` model for `model.fit`.

    A model with a token head (multitask) gets the task loss plus
    `multitask_loss_weight` times the token loss, the mean of the per-token
    cross-entropies weighted by the batch's token weights
    (`reduction="mean_with_sample_weight"`: sum(w * ce) / sum(w)).

    Returns:
        The logged name of the classification accuracy: "accuracy", or
        "logits_accuracy" for the two-output model (Keras prefixes the
        output's name).
    """
    classification = keras.losses.SparseCategoricalCrossentropy(
        from_logits=True
    )
    optimizer = make_optimizer(hp, total_steps)
    if not isinstance(model.output, dict):
        model.compile(optimizer=optimizer, loss=classification,
                      metrics=["accuracy"])
        return "accuracy"
    model.compile(
        optimizer=optimizer,
        loss={
            "logits": classification,
            "token_logits": keras.losses.SparseCategoricalCrossentropy(
                from_logits=True, reduction="mean_with_sample_weight"
            ),
        },
        loss_weights={"logits": 1.0,
                      "token_logits": float(hp["multitask_loss_weight"])},
        metrics={"logits": ["accuracy"]},
    )
    return "logits_accuracy"


def compile_pretrainer(model, hp, total_steps):
    """Compiles a `build_pretrainer` model: the weighted mean of the
    per-position cross-entropy (`pretrain_loss="ce"`) or absolute error
    of the pixel value (`"l1"`) over the weighted positions, at
    `hp["learning_rate"]`."""
    if hp.get("pretrain_loss", "ce") == "l1":
        loss = keras.losses.MeanAbsoluteError(
            reduction="mean_with_sample_weight"
        )
        weighted_metrics = []
    else:
        loss = keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction="mean_with_sample_weight"
        )
        weighted_metrics = [
            keras.metrics.SparseCategoricalAccuracy(name="token_accuracy")
        ]
    model.compile(
        optimizer=make_optimizer(hp, total_steps),
        loss=loss,
        weighted_metrics=weighted_metrics,
    )


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

    The technique (`hp["technique"]`) decides what trains:
    "none" the classifier; "multitask" the classifier plus a token head on
    the shared encoder, the two losses summed (`multitask_loss_weight`);
    "spt" first self-pretrains the encoder (`self_pretrain`, in
    `<out_dir>/pretrain/`), then fine-tunes the classifier from it.
    `hp["augment"]` augments the training batches. The returned and saved
    model is always the classifier alone.

    `callbacks` are added after the run's own (schedule, backup, CSV log,
    best checkpoint).
    """
    hp = dict(hp) if hp is not None else get_hparams(task)
    name = run_name(hp)
    out_dir = Path(out_dir or Path("runs") / name)
    out_dir.mkdir(parents=True, exist_ok=True)
    backup_dir = out_dir / "backup"
    resuming = backup_dir.exists()
    if resuming or (out_dir / "pretrain").exists():
        _check_resumable(out_dir, hp)
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
    technique = hp.get("technique", "none")
    if technique not in TECHNIQUES:
        raise ValueError(
            f"`technique` must be one of {TECHNIQUES}. "
            f"Received: technique={technique!r}"
        )
    multitask = technique == "multitask"
    print(
        f"{task}: {len(y_train)} train / {len(splits['val'][1])} val / "
        f"{len(splits['test'][1])} test rows of length "
        f"{hp['sequence_length']}; backend {environment['backend']}; "
        f"technique {technique}{', augmented' if hp.get('augment') else ''}",
        flush=True,
    )
    pretrain_seconds = 0.0
    encoder_weights = None
    if technique == "spt":
        pretrain_started = time.time()
        encoder_weights = self_pretrain(
            task, hp, x_train, splits["val"][0], out_dir / "pretrain",
            seed=seed, verbose=verbose,
        )
        pretrain_seconds = time.time() - pretrain_started

    objective = "multitask" if multitask else None
    train = make_batches(x_train, y_train, hp, shuffle=True, seed=seed,
                         objective=objective, training=True)
    val = make_batches(*splits["val"], hp, objective=objective)
    test = make_batches(*splits["test"], hp)
    model = build_classifier(**hp, token_head=multitask)
    if encoder_weights is not None:
        model.get_layer("encoder").load_weights(str(encoder_weights))
    accuracy_key = compile_classifier(model, hp, len(train) * hp["epochs"])
    classifier = model
    if multitask:
        # The classifier alone: the same layers without the token head.
        classifier = keras.Model(model.input, model.output["logits"],
                                 name=model.name)
    best_path = out_dir / "best.weights.h5"
    # After a resume, only an epoch better than those already logged may
    # replace the best checkpoint.
    best_so_far = max(_val_accuracies(out_dir, f"val_{accuracy_key}"),
                      default=None)
    # The schedule's callbacks come first: their state must be updated
    # before BackupAndRestore writes the epoch's backup.
    run_callbacks = make_callbacks(hp) + [
        keras.callbacks.BackupAndRestore(str(backup_dir)),
        keras.callbacks.CSVLogger(str(out_dir / "metrics.csv"), append=True),
        keras.callbacks.ModelCheckpoint(
            str(best_path),
            monitor=f"val_{accuracy_key}",
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
    if multitask:
        classifier.compile(
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )
    test = classifier.evaluate(test, return_dict=True, verbose=0)
    val_acc = _val_accuracies(out_dir, f"val_{accuracy_key}")
    metrics = dict(
        task=task,
        model=hp["model"],
        preset=hp["preset"],
        technique=technique,
        augment=bool(hp.get("augment")),
        test_accuracy=float(test["accuracy"]),
        test_loss=float(test["loss"]),
        best_val_accuracy=max(val_acc, default=float("nan")),
        epochs_run=len(val_acc),
        wall_seconds=round(time.time() - started, 1),
        fit_seconds=round(fit_seconds, 1),
        pretrain_seconds=round(pretrain_seconds, 1),
        num_parameters=int(classifier.count_params()),
        **environment,
    )
    model_path = out_dir / "model.keras"
    save_model(classifier, model_path)
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
    return classifier, metrics


def self_pretrain(task, hp, x_train, x_val, out_dir, *, seed=0,
                  verbose="auto"):
    """Self-pretrains the encoder on the task's own inputs (NTFS §2).

    Trains `build_pretrainer` on the training split without labels, with
    the masked (`spt_mask_rate` of the real tokens become the mask token;
    loss at those positions) or causal (next token; `causal=True`)
    objective of `hp["pretrain_objective"]`, for `pretrain_epochs` epochs
    at `pretrain_learning_rate` and `pretrain_batch_size` (None: the
    fine-tuning values). `pretrain_loss="l1"` regresses the pixel values
    of a pixel task. Retrieval pretrains on the documents one by one.

    Resumable: `<out_dir>/backup/` holds the interrupted state, and a
    finished pretraining (`<out_dir>/encoder.weights.h5`) is reused
    rather than repeated. Writes `metrics.csv` (per epoch) and
    `metrics.json`.

    Returns:
        The path of the encoder's weights, or None when `pretrain_epochs`
        is 0 (compute-tied runs with no pretraining share).
    """
    out_dir = Path(out_dir)
    weights_path = out_dir / "encoder.weights.h5"
    epochs = hp.get("pretrain_epochs")
    epochs = hp["epochs"] if epochs is None else int(epochs)
    if epochs == 0:
        return None
    if weights_path.exists():
        print(f"Self-pretraining already done: {weights_path}", flush=True)
        return weights_path
    out_dir.mkdir(parents=True, exist_ok=True)
    if x_train.ndim == 3:  # retrieval pairs -> single documents
        x_train = x_train.reshape(-1, x_train.shape[-1])
        x_val = x_val.reshape(-1, x_val.shape[-1])
    objective = hp.get("pretrain_objective", "masked")
    pt_hp = dict(hp)
    pt_hp["learning_rate"] = (hp.get("pretrain_learning_rate")
                              or hp["learning_rate"])
    batch_size = hp.get("pretrain_batch_size") or hp["batch_size"]
    train = make_batches(x_train, None, pt_hp, shuffle=True, seed=seed,
                         objective=objective, training=True,
                         batch_size=batch_size)
    val = make_batches(x_val, None, pt_hp, seed=seed + 1,
                       objective=objective, batch_size=batch_size)
    model = build_pretrainer(**hp)
    compile_pretrainer(model, pt_hp, len(train) * epochs)
    print(
        f"Self-pretraining ({objective}, {hp.get('pretrain_loss', 'ce')} "
        f"loss) for {epochs} epochs on {len(x_train)} sequences",
        flush=True,
    )
    started = time.time()
    model.fit(
        train,
        epochs=epochs,
        validation_data=val,
        callbacks=make_callbacks(pt_hp) + [
            keras.callbacks.BackupAndRestore(str(out_dir / "backup")),
            keras.callbacks.CSVLogger(str(out_dir / "metrics.csv"),
                                      append=True),
        ],
        verbose=verbose,
    )
    encoder = model.get_layer("encoder")
    tmp = out_dir / "encoder.tmp.weights.h5"
    encoder.save_weights(str(tmp))
    os.replace(tmp, weights_path)
    _write_json(out_dir / "metrics.json", dict(
        objective=objective,
        loss=hp.get("pretrain_loss", "ce"),
        epochs=epochs,
        seconds=round(time.time() - started, 1),
    ))
    return weights_path


def save_model_card(model_path, hp, metrics, saved_models_dir, name, export):
    """Copies the model to `saved_models/` with a JSON card and SavedModel."""
    saved_models_dir.mkdir(parents=True, exist_ok=True)
    tmp = saved_models_dir / f".{name}.partial.keras"
    shutil.copyfile(model_path, tmp)
    os.replace(tmp, saved_models_dir / f"{name}.keras")
    _write_json(
        saved_models_dir / f"{name}.json", dict(hparams=hp, metrics=metrics)
    )
    if export:
        from lra_keras.export import export_saved_model

        export_saved_model(model_path, saved_models_dir / name)
