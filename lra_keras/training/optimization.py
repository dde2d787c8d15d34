"""The optimizer, the learning-rate schedule and the schedule's callbacks.

AdamW everywhere; norms, biases and the family's dynamics weights (its
registry entry's `dynamics`, e.g. S4's `ssm_log_dt`) get no weight decay,
as in the S4 and MEGA code, and the dynamics train at `ssm_learning_rate`
when it is set. Schedules: constant or cosine decay after a linear warmup,
or YCTFS's "plateau" (A.2): the rate lowered on training-loss plateaus,
then multiplied by `final_decay_factor` over the last
`final_decay_fraction` of the steps.
"""

from pathlib import Path

import keras

from lra_keras.batching import EpochSync
from lra_keras.callbacks import ReduceOnTrainingPlateau
from lra_keras.callbacks import RunProgress
from lra_keras.callbacks import StopOnNonFiniteLoss
from lra_keras.models.families import FAMILIES
from lra_keras.models.families import all_dynamics_patterns
from lra_keras.optimizers import AdamW
from lra_keras.optimizers import ScheduledAdamW
from lra_keras.schema import SCHEDULES
from lra_keras.training.resume import BackupCallback

# Norm scales and offsets and biases get no weight decay (Keras's names).
NO_DECAY = ("bias", "gamma", "beta")


def dynamics_patterns(hp):
    """The dynamics weights of `hp["model"]` as variable-name patterns; of
    every family when the row names none (a model built by hand)."""
    model = hp.get("model")
    if model in FAMILIES:
        return FAMILIES[model].dynamics_patterns()
    return all_dynamics_patterns()


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
    """AdamW; norms, biases and the family's dynamics get no weight decay.

    With `ssm_learning_rate`, the dynamics weights train at that rate
    (times the same schedule shape). With `schedule="plateau"` (YCTFS
    A.2), the rate is also multiplied by `final_decay_factor` over the
    last `final_decay_fraction` of the `total_steps`, and the callbacks of
    `make_callbacks` lower it on training-loss plateaus.
    """
    peak = float(hp["learning_rate"])
    ssm_rate = hp.get("ssm_learning_rate")
    dynamics = dynamics_patterns(hp)
    multipliers = {}
    if ssm_rate is not None:
        if not float(ssm_rate) > 0 or not peak > 0:
            raise ValueError(
                "`learning_rate` and `ssm_learning_rate` must be positive. "
                f"Received: learning_rate={peak}, "
                f"ssm_learning_rate={ssm_rate}"
            )
        multipliers = {p: float(ssm_rate) / peak for p in dynamics}
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
    excluded = list(NO_DECAY + dynamics)
    if not multipliers and final_decay_step is None:
        # Keras's own class is fused under PyTorch (only that exact class,
        # about 10% faster per step than a subclass there), where its
        # gradients are dense anyway; elsewhere ours, which makes the
        # sparse Embedding gradients of TensorFlow dense (AdamW docstring).
        plain = (keras.optimizers.AdamW if keras.backend.backend() == "torch"
                 else AdamW)
        optimizer = plain(**adamw)
        optimizer.exclude_from_weight_decay(var_names=excluded)
        return optimizer
    return ScheduledAdamW(
        **adamw,
        rate_multipliers=multipliers,
        final_decay_step=final_decay_step,
        final_decay_factor=float(hp.get("final_decay_factor", 0.1))
        if final_decay_step is not None else 1.0,
        weight_decay_excluded=excluded,
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


def fit_callbacks(hp, out_dir, train, val, hint, *, checkpoint=None,
                  backup_seconds=300.0, backup_steps=None, seed=0):
    """The callbacks of one resumable `fit` logging into `out_dir`.

    In this order: `EpochSync` (the data streams of `train` and `val`
    follow Keras's epoch, also right after a resume), the non-finite loss
    stop (`hint` ends its message), the schedule's callbacks (their state
    is updated before the backup is written), `checkpoint` if given, the
    CSV log `out_dir/metrics.csv`, and the backup in `out_dir/backup`
    (`training.resume.BackupCallback`: at every epoch's end, and within an
    epoch every `backup_seconds` and/or `backup_steps` batches; `seed`
    seeds PyTorch's global generator per epoch). Whatever
    an epoch's end writes is thus written before the backup that skips
    that epoch on resume. Last, the progress bar (`RunProgress`: Keras's,
    each epoch announced with the run's ETA). Train with
    `training.resume.resumable_fit`.
    """
    out_dir = Path(out_dir)
    return [
        EpochSync(train, val),
        StopOnNonFiniteLoss(hint),
        *make_callbacks(hp),
        *([checkpoint] if checkpoint is not None else []),
        keras.callbacks.CSVLogger(str(out_dir / "metrics.csv"), append=True),
        BackupCallback(out_dir / "backup", every_seconds=backup_seconds,
                       every_steps=backup_steps, seed=seed),
        RunProgress(),
    ]
