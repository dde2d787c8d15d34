"""The optimizer, the learning-rate schedule and the schedule's callbacks.

AdamW everywhere, with `adam_beta_1`, `adam_beta_2`, `adam_epsilon` and
`adam_epsilon_style` (PyTorch's placement of epsilon by default).
Which weights decay is the row's `weight_decay_on` (`DECAY_EXCLUSIONS`),
since every source draws the line elsewhere: the S4 code decays all but its
SSM parameters, YCTFS only matrices, fairseq (MEGA) everything. The family's
dynamics weights (its registry entry's `dynamics`, e.g. S4's `ssm_log_A_real`)
train at `ssm_learning_rate` when it is set, and do not decay unless
`weight_decay_on="all"`. Two of them can be moved, each by a rate and a
decay key:

- the step size (`Family.timescales`): `dt_learning_rate="global"` trains
  it at the global rate (S4's `lr: {dt: null, A: 0.001, B: 0.001}`);
  `dt_weight_decay=True` decays it as `weight_decay_on` decays the other
  weights (S5's `--dt_global`, which puts log_step in the "regular" AdamW
  group: both keys);
- the input matrix B (`Family.input_matrix`): `B_learning_rate="global"`
  and `B_weight_decay=True`, the same (S5's `--opt_config`: "BandCdecay"
  decays B at the SSM rate, "BfastandCdecay" trains B at the global rate
  with decay).

A weight decays at its own rate (`optimizers.ScheduledAdamW`): B under
"BandCdecay" by `weight_decay * ssm_learning_rate`, as optax's `adamw`
of S5's group. Decaying a dynamics weight needs a `weight_decay_on` that
decays more than matrices (not "kernels").

Schedules: constant or cosine decay after a linear warmup (the cosine
reaching 0 at `schedule_steps`, by default the run's last step), or
YCTFS's "plateau" (A.2): the rate lowered on training-loss plateaus, then
over the last `final_decay_fraction` of the steps `final_decay_factor`
times the schedule's rate, the earlier reductions forgotten
(`final_decay_style="reset"`, the YCTFS code's cooldown) or kept
(`"multiply"`), later plateaus lowering it further.
`schedule_style="s5"` counts the steps of "constant" and "cosine" as
S5's training loop does (`optimizers.S5Schedule`: the first step at the
peak, the cosine's phase counted from step 0); "linear" and "plateau"
ignore it. "rsqrt" is LRA's `constant * linear_warmup * rsqrt_decay`
(`optimizers.RsqrtDecay`; `learning_rate` is the constant).

Stochastic weight averaging (`swa_start_fraction`, Lightning's
`swa_epoch_start`; YCTFS's text row): from that share of the epochs the
rate anneals to `swa_learning_rate` over `swa_annealing_epochs`, replacing
the schedule, and a mean of the weights is kept beside the run
(`callbacks.StochasticWeightAveraging`).
"""

from pathlib import Path

import keras

from lra_keras.batching import EpochSync
from lra_keras.callbacks import ReduceOnTrainingPlateau
from lra_keras.callbacks import RunProgress
from lra_keras.callbacks import StochasticWeightAveraging
from lra_keras.callbacks import StopOnNonFiniteLoss
from lra_keras.callbacks import swa_start_epoch
from lra_keras.models.families import FAMILIES
from lra_keras.optimizers import AdamW
from lra_keras.optimizers import RsqrtDecay
from lra_keras.optimizers import S5Schedule
from lra_keras.optimizers import ScheduledAdamW
from lra_keras.optimizers import WarmupLinearDecay
from lra_keras.schema import B_LEARNING_RATES
from lra_keras.schema import DT_LEARNING_RATES
from lra_keras.schema import SCHEDULE_STYLES
from lra_keras.schema import SCHEDULES
from lra_keras.training.resume import BackupCallback

# Norm scales and offsets and biases (Keras's names).
NO_DECAY = ("bias", "gamma", "beta")
# Names that are not the kernel of a dense or convolution layer (Keras's
# `kernel`, the gMLP's `spatial_kernel`): all but the matrices.
NOT_A_KERNEL = (r"^(?!.*kernel(:\d+)?$)",)

# `weight_decay_on` (its choices: `schema.WEIGHT_DECAY_ON`): the weights
# that decay, as variable-name patterns of those that do not, given the
# family's dynamics patterns.
DECAY_EXCLUSIONS = {
    # Every weight: fairseq's Adam (MEGA) decays all parameters.
    "all": lambda dynamics: [],
    # All but the SSM parameters: the S4 code registers those with
    # weight decay 0 (state-spaces/s4 src/models/sequence/kernels/
    # kernel.py:111, `register(..., wd=0.0)`) and decays everything else,
    # norms, biases and embeddings included.
    "all_but_dynamics": lambda dynamics: list(dynamics),
    # Neither norms, biases nor dynamics (this library's default).
    "all_but_norms_biases_dynamics": lambda dynamics: [*NO_DECAY, *dynamics],
    # Matrices only: the kernels of dense and convolution layers; no
    # embedding, norm, bias or other weight (YCTFS,
    # src/utils/weight_decay_param_filter.py).
    "kernels": lambda dynamics: list(NOT_A_KERNEL),
}


def dynamics_patterns(hp, names="dynamics"):
    """The dynamics weights (or `names="timescales"`, the step sizes, or
    `"input_matrix"`, B) of `hp["model"]` as variable-name patterns; of
    every family when the row names none (a model built by hand)."""
    families = ([FAMILIES[hp["model"]]] if hp.get("model") in FAMILIES
                else FAMILIES.values())
    return tuple(p for f in families
                 for p in f.dynamics_patterns(getattr(f, names)))


def make_schedule(hp, total_steps):
    """Learning rate: constant, cosine, linear or rsqrt decay after a warmup.

    The cosine and constant schedules warm up linearly; "linear" (MEGA's)
    with the power `warmup_power` (`optimizers.WarmupLinearDecay`); each
    warmup starts at `warmup_initial_learning_rate` (MEGA's 1e-7; 0 by
    default; S5's own warmup takes none). Both
    decays reach 0 at `schedule_steps` (default: `total_steps`). "plateau"
    has the constant shape here; its reductions come from
    `ScheduledAdamW` and `ReduceOnTrainingPlateau` (see `make_optimizer`).
    "rsqrt" is LRA's (`optimizers.RsqrtDecay`): `learning_rate` is its
    constant, divided by `sqrt(max(step, warmup_steps))`.
    With `schedule_style="s5"`, "constant" and "cosine" count their steps
    as S5's loop does (`optimizers.S5Schedule`); the other schedules
    ignore the style (a technique's "plateau" over an S5 row).
    """
    peak = float(hp["learning_rate"])
    warmup = int(hp.get("warmup_steps") or 0)
    total_steps = int(hp.get("schedule_steps") or total_steps)
    schedule = hp.get("schedule", "constant")
    style = hp.get("schedule_style", "keras")
    if schedule not in SCHEDULES or style not in SCHEDULE_STYLES:
        raise ValueError(
            f"`schedule` must be one of {SCHEDULES} and `schedule_style` "
            f"one of {SCHEDULE_STYLES}. Received: schedule={schedule!r}, "
            f"schedule_style={style!r}"
        )
    initial = float(hp.get("warmup_initial_learning_rate") or 0.0)
    if style == "s5" and schedule in ("constant", "cosine"):
        if initial:
            raise ValueError(
                "S5's warmup starts at peak / warmup_steps "
                "(`schedule_style='s5'`); it takes no "
                "`warmup_initial_learning_rate`. Received: "
                f"warmup_initial_learning_rate={initial}"
            )
        return S5Schedule(peak, warmup, max(total_steps, warmup + 1),
                          cosine=schedule == "cosine")
    if schedule == "rsqrt":  # `learning_rate` is LRA's constant
        return RsqrtDecay(peak, warmup)
    if schedule == "linear":
        return WarmupLinearDecay(peak, warmup, max(total_steps, warmup + 1),
                                 float(hp.get("warmup_power", 1.0)),
                                 initial=initial)
    if schedule != "cosine" and warmup == 0:
        return peak
    # Keras's warmup rises linearly from `initial_learning_rate`.
    return keras.optimizers.schedules.CosineDecay(
        initial_learning_rate=initial if warmup else peak,
        decay_steps=max(1, total_steps - warmup),
        # alpha=1 keeps the rate at its peak after warmup: "constant".
        alpha=0.0 if schedule == "cosine" else 1.0,
        warmup_target=peak if warmup else None,
        warmup_steps=warmup,
    )


def make_optimizer(hp, total_steps):
    """AdamW; the weights of `hp["weight_decay_on"]` decay.

    With `ssm_learning_rate`, the dynamics weights train at that rate
    (times the same schedule shape), the step sizes too unless
    `dt_learning_rate="global"`, B too unless `B_learning_rate="global"`;
    `dt_weight_decay` and `B_weight_decay` decay those (see the module
    docstring). With `schedule="plateau"` (YCTFS
    A.2), the rate is also multiplied by `final_decay_factor` over the
    last `final_decay_fraction` of the `total_steps`, and the callbacks of
    `make_callbacks` lower it on training-loss plateaus.
    """
    peak = float(hp["learning_rate"])
    ssm_rate = hp.get("ssm_learning_rate")
    dynamics = dynamics_patterns(hp)
    decay_on = hp.get("weight_decay_on", "all_but_norms_biases_dynamics")
    dt_rate = hp.get("dt_learning_rate", "ssm")
    b_rate = hp.get("B_learning_rate", "ssm")
    if (decay_on not in DECAY_EXCLUSIONS or dt_rate not in DT_LEARNING_RATES
            or b_rate not in B_LEARNING_RATES):
        raise ValueError(
            f"`weight_decay_on` must be one of {list(DECAY_EXCLUSIONS)}, "
            f"`dt_learning_rate` one of {list(DT_LEARNING_RATES)} and "
            f"`B_learning_rate` one of {list(B_LEARNING_RATES)}. Received: "
            f"weight_decay_on={decay_on!r}, dt_learning_rate={dt_rate!r}, "
            f"B_learning_rate={b_rate!r}"
        )
    # The dynamics moved to the global rate and those decayed. A family
    # without a step size ignores `dt_learning_rate`, as it always did; the
    # newer keys need the weights they move.
    global_rate, decayed = (), ()
    for names, at_global_rate, decays, keys in (
        ("timescales", dt_rate == "global", hp.get("dt_weight_decay"),
         "`dt_weight_decay=True`"),
        ("input_matrix", b_rate == "global", hp.get("B_weight_decay"),
         "`B_learning_rate='global'` or `B_weight_decay=True`"),
    ):
        patterns = dynamics_patterns(hp, names)
        if not patterns and (decays or (names == "input_matrix"
                                        and at_global_rate)):
            raise ValueError(
                f"Model {hp.get('model')!r} declares no `Family.{names}` "
                f"for {keys}."
            )
        global_rate += patterns if at_global_rate else ()
        decayed += patterns if decays else ()
    if decayed and decay_on == "kernels":
        raise ValueError(
            "`dt_weight_decay` and `B_weight_decay` decay dynamics weights, "
            "which weight_decay_on='kernels' (matrices only) never decays."
        )
    multipliers = {}
    if ssm_rate is not None:
        if not float(ssm_rate) > 0 or not peak > 0:
            raise ValueError(
                "`learning_rate` and `ssm_learning_rate` must be positive. "
                f"Received: learning_rate={peak}, "
                f"ssm_learning_rate={ssm_rate}"
            )
        multipliers = {p: float(ssm_rate) / peak for p in dynamics
                       if p not in global_rate}
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
        beta_1=float(hp.get("adam_beta_1", 0.9)),
        beta_2=float(hp.get("adam_beta_2", 0.999)),
        epsilon=float(hp.get("adam_epsilon", 1e-8)),
        epsilon_style=hp.get("adam_epsilon_style", "torch"),
        global_clipnorm=hp.get("gradient_clipnorm"),
    )
    excluded = DECAY_EXCLUSIONS[decay_on](
        tuple(p for p in dynamics if p not in decayed))
    swa = hp.get("swa_start_fraction") is not None
    if not multipliers and final_decay_step is None and not swa:
        optimizer = AdamW(**adamw)
        optimizer.exclude_from_weight_decay(var_names=excluded)
        return optimizer
    return ScheduledAdamW(
        **adamw,
        rate_multipliers=multipliers,
        final_decay_step=final_decay_step,
        final_decay_factor=float(hp.get("final_decay_factor", 0.1))
        if final_decay_step is not None else 1.0,
        final_decay_resets=hp.get("final_decay_style", "reset") == "reset",
        weight_decay_excluded=excluded,
        swa=swa,
    )


def make_callbacks(hp, epochs=None):
    """The schedule's callbacks (place them before `BackupAndRestore`).

    With `epochs`, the fit's number of epochs, also stochastic weight
    averaging where `swa_start_fraction` is set (a pretraining fit, which
    passes none, has none)."""
    callbacks = []
    if hp.get("schedule") == "plateau":
        callbacks.append(ReduceOnTrainingPlateau(
            factor=float(hp.get("plateau_factor", 0.2)),
            patience=int(hp.get("plateau_patience", 4)),
            min_learning_rate=float(hp.get("plateau_min_learning_rate",
                                           1e-7)),
        ))
    if epochs is not None and hp.get("swa_start_fraction") is not None:
        callbacks.append(StochasticWeightAveraging(
            swa_start_epoch(hp["swa_start_fraction"], epochs),
            hp["swa_learning_rate"],
            annealing_epochs=int(hp.get("swa_annealing_epochs", 10)),
            annealing=hp.get("swa_annealing", "cos"),
        ))
    return callbacks


def fit_callbacks(hp, out_dir, train, val, hint, *, checkpoint=None,
                  backup_seconds=300.0, backup_steps=None, seed=0,
                  epochs=None):
    """The callbacks of one resumable `fit` logging into `out_dir`.

    In this order: `EpochSync` (the data streams of `train` and `val`
    follow Keras's epoch, also right after a resume), the non-finite loss
    stop (`hint` ends its message), the schedule's callbacks (their state
    is updated before the backup is written), `checkpoint` if given, the
    CSV log `out_dir/metrics.csv`, and the backup in `out_dir/backup`
    (`training.resume.BackupCallback`: at every epoch's end, and within an
    epoch every `backup_seconds` and/or `backup_steps` batches; `seed`
    seeds PyTorch's global generator per epoch; `epochs`, the fit's
    epochs, adds stochastic weight averaging, `make_callbacks`). Whatever
    an epoch's end writes is thus written before the backup that skips
    that epoch on resume. Last, the progress bar (`RunProgress`: Keras's,
    each epoch announced with the run's ETA). Train with
    `training.resume.resumable_fit`.
    """
    out_dir = Path(out_dir)
    return [
        EpochSync(train, val),
        StopOnNonFiniteLoss(hint),
        *make_callbacks(hp, epochs),
        *([checkpoint] if checkpoint is not None else []),
        keras.callbacks.CSVLogger(str(out_dir / "metrics.csv"), append=True),
        BackupCallback(out_dir / "backup", every_seconds=backup_seconds,
                       every_steps=backup_steps, seed=seed),
        RunProgress(time_limit=(60 * hp["time_limit_minutes"]
                                if hp.get("time_limit_minutes") else None),
                    total_steps=hp.get("train_steps")),
    ]
