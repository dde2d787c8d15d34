"""Training callbacks.

`ReduceOnTrainingPlateau` is the plateau half of the YCTFS scheduler (A.2:
"a learning rate scheduler that reduces the learning rate on training
plateau and during the last 10% of the training epochs"); the other half,
the final decay, is a function of the step inside
`lra_keras.optimizers.ScheduledAdamW`. Together they are
`schedule="plateau"` in `lra_keras.training`.

Semantics follow the authors' PyTorch `ReduceLROnPlateau` (mode "min" on
the epoch's mean training loss, relative threshold 1e-4, no cooldown, a
floor `min_lr`), with Keras's meaning of `patience`: the rate drops at the
end of the `patience`-th epoch in a row without improvement (PyTorch drops
after `patience + 1` such epochs).

References:
- "You Can Train from Scratch" (anonymous ICLR submission), appendix A.2.
- Original files read: pablomiralles22/long-transformers
  configs/scheduler/train_plateau.yaml (factor 0.2, patience 3, min_lr
  1e-7, metric train_loss, interval epoch), src/training/
  scheduler_builder.py; torch.optim.lr_scheduler.ReduceLROnPlateau;
  keras/src/callbacks/reduce_lr_on_plateau.py.
"""

import math
import time

import keras

from lra_keras.optimizers import ScheduledAdamW


def _value(variable):
    return float(keras.ops.convert_to_numpy(variable))


def scheduled_optimizer(optimizer):
    """The optimizer itself, or the one a `LossScaleOptimizer` wraps
    (Keras's `compile` wraps it under the "mixed_float16" policy)."""
    return getattr(optimizer, "inner_optimizer", optimizer)


def _scheduled_adamw(callback, holds, swa=False):
    """The `ScheduledAdamW` (with `swa=True` if `swa`) that `callback`'s
    model trains with, which holds its state (`holds`); a `TypeError`
    naming the callback otherwise."""
    optimizer = scheduled_optimizer(callback.model.optimizer)
    if isinstance(optimizer, ScheduledAdamW) and (optimizer.swa or not swa):
        return optimizer
    raise TypeError(
        f"{type(callback).__name__} needs a model compiled with "
        f"lra_keras.optimizers.ScheduledAdamW{'(swa=True)' if swa else ''} "
        f"(it holds {holds}). Received: {type(optimizer).__name__}"
    )


class ReduceOnTrainingPlateau(keras.callbacks.Callback):
    """Multiplies the rate by `factor` when the training loss stalls.

    The state (scale, best loss, epochs without improvement) is kept in
    the variables of the model's `ScheduledAdamW`, so a run resumed by
    `keras.callbacks.BackupAndRestore` continues it. Place this callback
    BEFORE `BackupAndRestore` in the list, so that each epoch's update is
    in the backup written at that epoch's end.

    With an optimizer whose final decay resets (`ScheduledAdamW(
    final_decay_resets=True)`), the reductions made before the final decay
    are forgotten when it starts: from its first step the rate is the
    schedule's times `final_decay_factor`, and later plateaus reduce that,
    as the YCTFS code's `SequentialLR` sets its cooldown `ConstantLR`'s
    closed-form rate (initial rate x 0.1) at the milestone while
    `ReduceLROnPlateau` keeps acting on the optimizer's rate
    (long-transformers@lra-paper `src/training/scheduler_builder.py` lines
    66-87, `configs/scheduler/constant_w_cooldown.yaml`).

    Args:
        factor: float in (0, 1). Rate multiplier of one reduction.
            Defaults to 0.2.
        patience: int >= 1. Epochs in a row without improvement after
            which the rate is reduced. Defaults to 4 (PyTorch patience 3).
        min_learning_rate: float. A reduction never takes the rate below
            this. Defaults to 1e-7.
        threshold: float. Relative improvement needed: the loss improves
            when it is below `best * (1 - threshold)`. Defaults to 1e-4.
        monitor: str. The logged quantity. Defaults to `"loss"`.

    Example:

    ```python
    model.compile(optimizer=ScheduledAdamW(1e-3), loss=...)
    model.fit(x, y, epochs=100, callbacks=[ReduceOnTrainingPlateau()])
    ```
    """

    def __init__(self, factor=0.2, patience=4, min_learning_rate=1e-7,
                 threshold=1e-4, monitor="loss"):
        super().__init__()
        if not 0.0 < factor < 1.0:
            raise ValueError(
                f"`factor` must be in (0, 1). Received: factor={factor}"
            )
        if int(patience) != patience or patience < 1:
            raise ValueError(
                f"`patience` must be an integer >= 1. Received: "
                f"patience={patience}"
            )
        if min_learning_rate < 0 or threshold < 0:
            raise ValueError(
                "`min_learning_rate` and `threshold` must be >= 0. "
                f"Received: min_learning_rate={min_learning_rate}, "
                f"threshold={threshold}"
            )
        self.factor = float(factor)
        self.patience = int(patience)
        self.min_learning_rate = float(min_learning_rate)
        self.threshold = float(threshold)
        self.monitor = monitor

    def _optimizer(self):
        return _scheduled_adamw(self, "the plateau state")

    def on_train_begin(self, logs=None):
        self._optimizer()

    def _resets_at(self):
        """The step whose start resets the plateau scale, or None."""
        optimizer = self._optimizer()
        if (not optimizer.final_decay_resets
                or optimizer.final_decay_step is None
                or optimizer.final_decay_factor == 1.0):
            return None
        return optimizer.final_decay_step

    def on_epoch_begin(self, epoch, logs=None):
        # Read here, after `BackupAndRestore` restored the optimizer; the
        # reset happens at the end of the step before the final decay
        # (so the logs and any backup then hold it), or here for a final
        # decay from step 0.
        self._iteration = int(_value(self._optimizer().iterations))
        if self._iteration == 0 and self._resets_at() == 0:
            self._optimizer().plateau_scale.assign(1.0)

    def on_train_batch_end(self, batch, logs=None):
        self._iteration += 1
        if self._iteration == self._resets_at():
            self._optimizer().plateau_scale.assign(1.0)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        if self.monitor not in logs:
            raise KeyError(
                f"ReduceOnTrainingPlateau monitors {self.monitor!r}, which "
                f"is not logged. Logged: {sorted(logs)}"
            )
        optimizer = self._optimizer()
        loss = float(logs[self.monitor])
        best = _value(optimizer.plateau_best)
        wait = _value(optimizer.plateau_wait)
        if loss < best * (1.0 - self.threshold):
            best, wait = loss, 0.0
        else:
            wait += 1.0
            if wait >= self.patience:
                wait = 0.0
                rate = _value(optimizer.learning_rate)
                if rate > 0:
                    # The floor applies to the current rate, as PyTorch's
                    # min_lr applies to the optimizer's current lr.
                    step = max(self.factor, self.min_learning_rate / rate)
                    if step < 1.0:
                        optimizer.plateau_scale.assign(
                            _value(optimizer.plateau_scale) * step
                        )
        optimizer.plateau_best.assign(best)
        optimizer.plateau_wait.assign(wait)
        logs["learning_rate"] = _value(optimizer.learning_rate)


def swa_start_epoch(start_fraction, epochs):
    """The 0-based epoch where Lightning's `StochasticWeightAveraging`
    with a float `swa_epoch_start` begins: `int(fraction * max_epochs)`
    counted from 1 (`on_fit_start`; the `swa_start` property)."""
    return max(int(float(start_fraction) * int(epochs)) - 1, 0)


def swa_annealed_rate(base_rate, swa_rate, epochs_in, annealing_epochs,
                      annealing="cos"):
    """The rate of the `epochs_in`-th epoch (0 for the first) of SWA.

    PyTorch's `SWALR` stepped once an epoch from the rate `base_rate`:
    `base + (swa - base) * a(t)`, `t = min(1, k / annealing_epochs)`,
    `a(t) = (1 - cos(pi t)) / 2` ("cos") or `t` ("linear"); without
    annealing epochs, `swa_rate` from the first (`SWALR.get_lr`, whose
    recursion through `_get_initial_lr` gives this closed form while
    nothing else sets the rate).
    """
    if annealing not in ("cos", "linear"):
        raise ValueError(
            "`annealing` must be 'cos' or 'linear'. Received: "
            f"annealing={annealing!r}")
    if int(annealing_epochs) == 0:
        t = 1.0
    else:
        t = min(1.0, max(0.0, int(epochs_in) / int(annealing_epochs)))
    alpha = (1.0 - math.cos(math.pi * t)) / 2.0 if annealing == "cos" else t
    return float(swa_rate) * alpha + float(base_rate) * (1.0 - alpha)


class StochasticWeightAveraging(keras.callbacks.Callback):
    """Stochastic weight averaging as PyTorch Lightning's callback runs it.

    From the 0-based epoch `start_epoch` to the last, at each epoch's
    start (`StochasticWeightAveraging.on_train_epoch_start`, Lightning
    2.x):

    - the rate stops following the schedule (Lightning swaps the
      scheduler, YCTFS's `ReduceLROnPlateau`, for PyTorch's `SWALR`) and
      anneals from the rate the schedule gave at the start of
      `start_epoch` to `learning_rate` over `annealing_epochs` epochs
      (`swa_annealed_rate`), then stays there;
    - the weights as they stand, those of the previous epoch's end, join
      an equally weighted running mean (`avg + (w - avg) / (n + 1)`), so
      the mean holds the weights at the starts of epochs `start_epoch` to
      the last (the last epoch's own update never joins it, as in
      Lightning).

    The state lives in the optimizer (`ScheduledAdamW(swa=True)`): a
    resumed run continues the mean and the annealing. The mean replaces
    nothing: the run's test stays on its best checkpoint, as YCTFS's
    `train.py` (line 66, `ckpt_path="best"`), and `training.run` tests the
    averaged weights beside it (`swa_test_accuracy`). Lightning's
    BatchNorm refresh pass over the training data is not run: YCTFS's
    SWA rows have no BatchNorm (and `schema.check` refuses SWA with
    `norm="batch"`). The optimizer's per-variable rate multipliers
    (`ssm_learning_rate`) still scale the SWA rate, where Lightning's
    `SWALR` brings every parameter group to the one `swa_lrs`; the rows
    with SWA have one rate.

    Args:
        start_epoch: int >= 0 (`swa_start_epoch` turns Lightning's
            fraction into it).
        learning_rate: float > 0. Lightning's `swa_lrs`.
        annealing_epochs: int >= 0. Defaults to 10 (Lightning's).
        annealing: "cos" or "linear". Defaults to "cos".

    Reference: Lightning's
    `pytorch_lightning/callbacks/stochastic_weight_avg.py` (2.3.3) and
    `torch/optim/swa_utils.py` (`SWALR`); YCTFS's use:
    pablomiralles22/long-transformers@lra-paper `configs/callback/
    stochastic_weight_averaging.yaml` (start 0.75, cos) and
    `configs/experiment/lra/text_classification/base.yaml` lines 9-18,
    `rotary_transformer_denoise.yaml` (`swa_lrs` 1e-2, 4 annealing epochs).
    """

    def __init__(self, start_epoch, learning_rate, annealing_epochs=10,
                 annealing="cos"):
        super().__init__()
        if int(start_epoch) != start_epoch or start_epoch < 0:
            raise ValueError(
                "`start_epoch` must be an integer >= 0. Received: "
                f"start_epoch={start_epoch}")
        if not float(learning_rate) > 0:
            raise ValueError(
                "`learning_rate` must be positive. Received: "
                f"learning_rate={learning_rate}")
        if int(annealing_epochs) != annealing_epochs or annealing_epochs < 0:
            raise ValueError(
                "`annealing_epochs` must be an integer >= 0. Received: "
                f"annealing_epochs={annealing_epochs}")
        swa_annealed_rate(0.0, 1.0, 0, 1, annealing)  # checks `annealing`
        self.start_epoch = int(start_epoch)
        self.learning_rate = float(learning_rate)
        self.annealing_epochs = int(annealing_epochs)
        self.annealing = annealing

    def _optimizer(self):
        return _scheduled_adamw(self, "the mean", swa=True)

    def _rate(self, optimizer, epoch):
        """The rate of epoch `epoch` (>= `start_epoch`)."""
        return swa_annealed_rate(
            _value(optimizer.swa_base_rate), self.learning_rate,
            epoch - self.start_epoch, self.annealing_epochs, self.annealing)

    def on_train_begin(self, logs=None):
        self._optimizer()

    def on_epoch_begin(self, epoch, logs=None):
        if epoch < self.start_epoch:
            return
        optimizer = self._optimizer()
        if not optimizer.built:
            optimizer.build(self.model.trainable_variables)
        count = _value(optimizer.swa_count)
        if count == 0:
            # The schedule's rate now, before SWA takes it over.
            optimizer.swa_base_rate.assign(_value(optimizer.learning_rate))
        optimizer.swa_rate.assign(self._rate(optimizer, epoch))
        if epoch > _value(optimizer.swa_epoch):  # once an epoch, on resume too
            for average, variable in zip(optimizer.swa_averages,
                                         optimizer._trainable_variables):
                mean = keras.ops.convert_to_numpy(average)
                value = keras.ops.convert_to_numpy(variable)
                average.assign(mean + (value - mean) / (count + 1.0))
            optimizer.swa_count.assign(count + 1.0)
            optimizer.swa_epoch.assign(float(epoch))

    def on_epoch_end(self, epoch, logs=None):
        # As `ReduceOnTrainingPlateau`, the rate of the next epoch; logged
        # at every epoch, so that a CSV log has the column from its first
        # row, also in a run resumed after the start.
        if logs is None:
            return
        optimizer = self._optimizer()
        logs["learning_rate"] = (
            _value(optimizer.learning_rate) if epoch < self.start_epoch
            else self._rate(optimizer, epoch + 1))


def swa_weights(optimizer):
    """`[(variable, averaged value)]` of a `ScheduledAdamW(swa=True)` that
    has averaged at least once, else `[]`."""
    optimizer = scheduled_optimizer(optimizer)
    if not (isinstance(optimizer, ScheduledAdamW) and optimizer.swa
            and optimizer.swa_averages
            and _value(optimizer.swa_count) > 0):
        return []
    return [(variable, keras.ops.convert_to_numpy(average))
            for variable, average in zip(optimizer._trainable_variables,
                                         optimizer.swa_averages)]


class StopWithoutImprovement(keras.callbacks.Callback):
    """Stops training after `patience` epochs without a better `monitor`.

    PyTorch Lightning's `EarlyStopping` (mode "max", `min_delta` 0), which
    the YCTFS code puts on its tracked validation accuracy
    (long-transformers@lra-paper `src/training/callback_builder.py` lines
    24-25; `configs/experiment/lra/<task>/base.yaml`: patience 20): an
    epoch improves when its value is above the best so far; after
    `patience` epochs in a row that do not, training stops at that epoch's
    end. At the start of every `fit` the count starts again from
    `history()`, the values of the epochs already logged (a resumed run's
    `metrics.csv`, read after the resume cut it to the backup), so an
    interrupted run stops where an uninterrupted one would.

    Args:
        monitor: str. The logged quantity, larger is better.
        patience: int >= 1.
        history: callable returning the values of the epochs before this
            `fit`. Defaults to none.
    """

    def __init__(self, monitor, patience, history=tuple):
        super().__init__()
        if int(patience) != patience or patience < 1:
            raise ValueError(
                f"`patience` must be an integer >= 1. Received: "
                f"patience={patience}"
            )
        self.monitor = monitor
        self.patience = int(patience)
        self.history = history

    def on_train_begin(self, logs=None):
        self.best, self.wait = float("-inf"), 0
        for value in self.history():
            self._update(float(value))

    def _update(self, value):
        if value > self.best:
            self.best, self.wait = value, 0
        else:
            self.wait += 1

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.monitor not in logs:
            raise KeyError(
                f"StopWithoutImprovement monitors {self.monitor!r}, which "
                f"is not logged. Logged: {sorted(logs)}"
            )
        self._update(float(_value(logs[self.monitor])))
        if self.wait >= self.patience:
            self.model.stop_training = True


class StopAtStep(keras.callbacks.Callback):
    """Stops training after `steps` batches in all.

    For the runs that count steps rather than epochs (`train_steps`; LRA's
    trainers: `for step, batch in zip(range(start_step, num_train_steps),
    train_iter)`, `listops/train.py` line 258): `fit` is given enough
    epochs, and the last one ends after the batch that makes `steps`, its
    validation and epoch-end callbacks included. A batch's number is
    `epoch * batches_per_epoch + step_offset + batch + 1`, with
    `step_offset` the batches of the epoch done before a resume
    (`resumable_fit` sets it), so a resumed run stops where an
    uninterrupted one would, whatever the optimizer counted (a
    `LossScaleOptimizer` does not count the steps it skips). Place it
    before the `BackupCallback`: a backup is not written at the stopping
    batch (the epoch's end writes one), so a run interrupted during the
    last validation trains that batch again rather than one more.

    Args:
        steps: int >= 1.
        batches_per_epoch: int >= 1.
    """

    def __init__(self, steps, batches_per_epoch):
        super().__init__()
        for name, value in (("steps", steps),
                            ("batches_per_epoch", batches_per_epoch)):
            if int(value) != value or value < 1:
                raise ValueError(
                    f"`{name}` must be an integer >= 1. Received: "
                    f"{name}={value}"
                )
        self.steps = int(steps)
        self.batches_per_epoch = int(batches_per_epoch)
        self.step_offset = 0
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        self.step_offset = 0

    def on_train_batch_end(self, batch, logs=None):
        done = (self.epoch * self.batches_per_epoch + self.step_offset
                + batch + 1)
        if done >= self.steps:
            self.model.stop_training = True


class StopAfterTime(keras.callbacks.Callback):
    """Stops training once `seconds` have passed since `fit` began.

    A run with a wall-clock budget (`time_limit_minutes`): checked after
    every batch, so the epoch in progress ends at the first batch past the
    budget, its validation, checkpoint and epoch-end callbacks included,
    as `StopAtStep` ends a step-counted run. The learning-rate schedule is
    the planned run's: a cut run is the beginning of that run, not a
    shorter one. The clock starts at this callback's first `fit` (the two
    `fit` calls of a run resumed within an epoch share it), so a run
    started again in a new process gets the whole budget again. Place it
    before the `BackupCallback`, for the reason `StopAtStep` gives.

    Args:
        seconds: float > 0.
        clock: callable returning seconds (default `time.monotonic`).
        on_stop: callable or None, called once when the limit stops
            training, before the epoch's end writes its backup (the run
            records there that it is done training).
    """

    def __init__(self, seconds, clock=time.monotonic, on_stop=None):
        super().__init__()
        if not seconds > 0:
            raise ValueError(
                f"`seconds` must be > 0. Received: seconds={seconds}")
        self.seconds = float(seconds)
        self.clock = clock
        self.on_stop = on_stop
        self.started = None
        self.stopped_epoch = None

    def on_train_begin(self, logs=None):
        if self.started is None:
            self.started = self.clock()

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if (self.stopped_epoch is None
                and self.clock() - self.started >= self.seconds):
            self.model.stop_training = True
            self.stopped_epoch = self.epoch
            # Keras's bar fills to the epoch's end: say where it stopped.
            print(f"\ntime limit of {self.seconds / 60:g} min reached after "
                  f"batch {batch + 1} of epoch {self.epoch + 1}: this "
                  "epoch ends here, validated", flush=True)
            if self.on_stop is not None:
                self.on_stop()


class NonFiniteLossError(RuntimeError):
    """A run's loss became NaN or infinite; the run stopped there."""


class StopOnNonFiniteLoss(keras.callbacks.Callback):
    """Raises `NonFiniteLossError` at the first non-finite loss.

    Checked after every training step (`loss`) and at the end of every
    epoch (`val_loss`), so that an exploded model never reaches the
    callbacks placed after this one (the epoch's backup, the best
    checkpoint) nor the code after `fit` (saving, export). Keras's
    `TerminateOnNaN` only stops `fit`, which then returns normally.

    Args:
        hint: str. Appended to the error message (what to try, where the
            last finite state is).
    """

    def __init__(self, hint=""):
        super().__init__()
        self.hint = hint
        self._epoch = 0
        # Batches of the epoch trained before this `fit` (a resumed epoch,
        # `training.resume.resumable_fit`): step numbers count them.
        self.step_offset = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def _check(self, logs, key, where):
        value = (logs or {}).get(key)
        if value is None:
            return
        value = _value(value)
        if not math.isfinite(value):
            raise NonFiniteLossError(
                f"The {key.replace('_', ' ')} is {value} at epoch "
                f"{self._epoch + 1}, {where}: the run stopped. "
                + self.hint
            )

    def on_train_batch_end(self, batch, logs=None):
        self._check(logs, "loss", f"step {self.step_offset + batch + 1}")

    def on_epoch_end(self, epoch, logs=None):
        self._check(logs, "loss", "epoch end")
        self._check(logs, "val_loss", "validation")


def format_duration(seconds):
    """`41 s`, `3 min 10 s`, `1 h 22 min`: the units a person reads."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


class RunProgress(keras.callbacks.ProgbarLogger):
    """Keras's progress bar, each epoch announced with the run's ETA.

    At each epoch's start it prints `Epoch k/N - run ETA 1 h 22 min (41 s
    per epoch)` where Keras prints `Epoch k/N`: the mean duration of the
    epochs trained so far in this process (validation included) times the
    epochs left, this one included; the progress bar within the epoch is
    Keras's own. An epoch resumed in its middle (`step_offset > 0`, set
    by `training.resume.resumable_fit`) is announced as such and left out
    of the mean, being shorter than the others.

    With `total_steps` (`train_steps`, `StopAtStep`), the epochs left are
    counted in steps, so a last epoch cut short counts for its part. With
    `time_limit` (`time_limit_minutes`, `StopAfterTime`), the ETA is
    the time left of the limit when that comes first (`run ETA 2 min 0 s
    (time limit; ...)`), and the first epoch is announced with it.

    Being a `ProgbarLogger`, it replaces the one `fit` would add, and
    prints nothing with `verbose=0`.

    Args:
        clock: `fn() -> seconds`. Defaults to `time.monotonic`.
        time_limit: seconds of training after which the run stops, or
            None. Defaults to None.
        total_steps: the run's steps in all when it counts steps, or
            None (it trains `epochs` whole epochs). Defaults to None.
    """

    def __init__(self, clock=None, time_limit=None, total_steps=None):
        super().__init__()
        self.clock = clock or time.monotonic
        self.time_limit = time_limit
        self.total_steps = total_steps
        self.step_offset = 0
        self.epoch_seconds = []
        self._started = None
        self._fit_started = None

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        if self._fit_started is None:  # as StopAfterTime's clock
            self._fit_started = self.clock()

    def on_epoch_begin(self, epoch, logs=None):
        self._reset_progbar()
        self._maybe_init_progbar()
        self._started = self.clock() if not self.step_offset else None
        if not self.verbose:
            return
        line = f"Epoch {epoch + 1}/{self.epochs}"
        if self.step_offset:
            line += f" - resumed after batch {self.step_offset}"
        limit_left = None
        if self.time_limit is not None and self._fit_started is not None:
            limit_left = max(
                0.0, self.time_limit - (self.clock() - self._fit_started))
        if self.epoch_seconds:
            mean = sum(self.epoch_seconds) / len(self.epoch_seconds)
            epochs_left = self.epochs - epoch
            steps = self.target  # batches an epoch (`set_params`)
            if self.total_steps and steps:
                epochs_left = (self.total_steps - epoch * steps) / steps
            left = mean * max(0.0, epochs_left)
            if limit_left is not None and limit_left < left:
                line += (f" - run ETA {format_duration(limit_left)} (time "
                         f"limit; {format_duration(mean)} per epoch)")
            else:
                line += (f" - run ETA {format_duration(left)} "
                         f"({format_duration(mean)} per epoch)")
        elif limit_left is not None:
            line += f" - time limit in {format_duration(limit_left)}"
        print(line, flush=True)

    def on_epoch_end(self, epoch, logs=None):
        super().on_epoch_end(epoch, logs)
        if self._started is not None:
            self.epoch_seconds.append(self.clock() - self._started)
