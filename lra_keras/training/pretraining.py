"""The self-pretraining phase of a run (technique "spt", NTFS §2).

`self_pretrain` trains `build_pretrainer` (the classifier's encoder and a
token head) on the task's training inputs without labels, with the
technique's masked or causal batches (`techniques.spt.PretrainingBatch`),
and saves the encoder's weights for the classifier to start from.
"""

import time
from pathlib import Path

import keras

from lra_keras._atomic import atomic_path
from lra_keras._atomic import write_json
from lra_keras.models import build_pretrainer
from lra_keras.models import pretrainer_kwargs
from lra_keras.techniques.base import compile_options
from lra_keras.training.inputs import make_batches
from lra_keras.training.optimization import fit_callbacks
from lra_keras.training.optimization import make_optimizer
from lra_keras.training.resume import TrainingBackup
from lra_keras.training.resume import resumable_fit


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
        **compile_options(hp),
    )


def pretraining_hparams(hp):
    """The row the pretraining phase optimises with: `hp` with its
    `pretrain_learning_rate`, `pretrain_schedule` and
    `pretrain_warmup_steps` in place of the fine-tuning's where set, and
    no `train_steps`, `time_limit_minutes` or `swa_start_fraction`."""
    pt_hp = dict(hp)
    pt_hp["learning_rate"] = (hp.get("pretrain_learning_rate")
                              or hp["learning_rate"])
    if hp.get("pretrain_schedule") is not None:
        pt_hp["schedule"] = hp["pretrain_schedule"]
    if hp.get("pretrain_warmup_steps") is not None:
        pt_hp["warmup_steps"] = hp["pretrain_warmup_steps"]
    # The fine-tuning's step count and time limit are not the phase's (its
    # progress bar would count against them), nor its weight averaging.
    pt_hp["train_steps"] = pt_hp["time_limit_minutes"] = None
    pt_hp["swa_start_fraction"] = None
    return pt_hp


def self_pretrain(task, hp, x_train, x_val, out_dir, *, seed=0,
                  verbose="auto", backup_seconds=300.0, backup_steps=None):
    """Self-pretrains the encoder on the task's own inputs (NTFS §2).

    Trains `build_pretrainer` on the training split without labels, with
    the masked (`spt_mask_rate` of the real tokens become the mask token;
    loss at those positions) or causal (next token; `causal=True`)
    objective of `hp["pretrain_objective"]`, for `pretrain_epochs` epochs
    at `pretrain_learning_rate` and `pretrain_batch_size`, with the
    schedule `pretrain_schedule` and `pretrain_warmup_steps` (None: the
    fine-tuning values). `pretrain_loss="l1"` regresses the pixel values
    of a pixel task. Retrieval pretrains on the documents one by one. With
    `augment`, the training batches are augmented as the classifier's.

    Resumable: `<out_dir>/backup/` holds the interrupted state (backed up
    at every epoch's end and every `backup_seconds` and/or `backup_steps`
    batches within one, `training.resume`), and a finished pretraining
    (`<out_dir>/encoder.weights.h5`) is reused rather than
    repeated. Writes `metrics.csv` (per epoch) and `metrics.json`.

    Returns:
        The path of the encoder's weights, or None when `pretrain_epochs`
        is 0 (compute-tied runs with no pretraining share).
    """
    from lra_keras import techniques

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
    pt_hp = pretraining_hparams(hp)
    batch_size = hp.get("pretrain_batch_size") or hp["batch_size"]
    transform = techniques.SPT.pretraining_transform(hp["task"], hp)
    augment = (techniques.get_augmentation(task).make(hp, seed)
               if hp.get("augment") else None)
    train = make_batches(x_train, None, pt_hp, shuffle=True, seed=seed,
                         augment=augment, transform=transform,
                         batch_size=batch_size)
    val = make_batches(x_val, None, pt_hp, seed=seed + 1,
                       transform=transform, batch_size=batch_size)
    model = build_pretrainer(**pretrainer_kwargs(hp))
    compile_pretrainer(model, pt_hp, len(train) * epochs)
    print(
        f"Self-pretraining ({objective}, {hp.get('pretrain_loss', 'ce')} "
        f"loss) for {epochs} epochs on {len(x_train)} sequences",
        flush=True,
    )
    started = time.time()
    resumable_fit(
        model, train, epochs=epochs, validation_data=val, verbose=verbose,
        callbacks=fit_callbacks(
            pt_hp, out_dir, train, val,
            f"(self-pretraining) The state after its last backup, if any, "
            f"is in {out_dir / 'backup'}. Try a lower "
            f"pretrain_learning_rate (now {pt_hp['learning_rate']:g}).",
            backup_seconds=backup_seconds, backup_steps=backup_steps,
            seed=seed,
        ),
        announce=lambda text: print(f"(self-pretraining) {text}",
                                    flush=True),
    )
    with atomic_path(weights_path, suffix=".weights.h5") as temporary:
        model.get_layer("encoder").save_weights(str(temporary))
    write_json(out_dir / "metrics.json", dict(
        objective=objective,
        loss=hp.get("pretrain_loss", "ce"),
        epochs=epochs,
        seconds=round(time.time() - started, 1),
    ))
    TrainingBackup(out_dir / "backup").remove()
    return weights_path
