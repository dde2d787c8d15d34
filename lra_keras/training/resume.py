"""Resumable training: the whole training state backed up during an epoch,
and a `fit` that continues from the step where it stopped.

Keras's `BackupAndRestore(save_freq=N)` saves within an epoch but restores
only the epoch's number (keras/src/callbacks/backup_and_restore.py,
`_load_model`): the interrupted epoch starts again from its first batch
with the weights of its N-th, so the model sees those batches twice and
the epoch's logged loss covers only the batches after the restart. Nor does
its weights file hold the states of the dropout seed generators or the
running totals of the metrics. A Path-X epoch interrupted after an hour
thus costs the hour, and the resumed run is not the run it would have been.

Here:

- `TrainingBackup` writes, each file atomically and the position last,
  the weights of the model and its optimizer, the states of the model's
  seed generators (and of torch's global generator, which Keras's
  PyTorch dropout uses), the running totals of its metrics, and the
  position
  (epoch, batches done in it). It also reads Keras's own backup format
  (a run interrupted before this module existed resumes at its epoch).
- `BackupCallback` writes one at the end of every epoch and, within an
  epoch, every `every_seconds` (and/or `every_steps` batches).
- `resumable_fit` restores the backup, finishes the interrupted epoch on
  the batches it had not trained on (`batching.RemainingBatches`), then
  runs the remaining epochs. The batches, the logged losses and the final
  weights are those of a run that was never interrupted, bit for bit under
  JAX, TensorFlow and PyTorch (tests/test_run_guards.py), provided the
  batches of epoch e are a function of (seed, e, index), as
  `LengthBucketedBatches` and `TechniqueBatches` are.

The backup stays after `fit` returns: the caller removes it
(`TrainingBackup.remove`) once the run's results are written, so a run
killed during its final evaluation or save resumes there rather than
training again.
"""

import csv
import json
import shutil
import time
from pathlib import Path

import keras
import numpy as np

from lra_keras._atomic import atomic_path
from lra_keras._atomic import write_json
from lra_keras.backend_utils import fit_input
from lra_keras.backend_utils import global_rng_state
from lra_keras.backend_utils import seed_global_rng
from lra_keras.backend_utils import set_global_rng_state
from lra_keras.batching import RemainingBatches
from lra_keras.saving import assign_in_order

STATE_FILE = "state.json"
FORMAT = 1


class BackupError(ValueError):
    """A backup directory that cannot be resumed from."""


def _seed_states(model):
    # Keras keeps a seed generator's state among the non-trainable
    # variables but not among the weights that `save_weights` writes.
    weights = {id(w) for w in model.weights}
    return [v for v in model.non_trainable_variables if id(v) not in weights]


def _numpy(variable):
    return np.asarray(keras.ops.convert_to_numpy(variable))


class TrainingBackup:
    """The training state of one `fit`, in a directory of its own.

        <directory>/state.json             epoch, step, and the files:
        <directory>/<stem>.weights.h5      model and optimizer weights
        <directory>/<stem>.npz             seed and generator states,
                                           metric totals

    `epoch` is the epoch to run next and `step` the number of its batches
    already trained on (0 at an epoch's end).

    Args:
        directory: str or path. Used by this backup alone.
    """

    def __init__(self, directory):
        self.directory = Path(directory)

    def save(self, model, epoch, step):
        """Writes the state of `model` (compiled, after `step` batches of
        epoch `epoch`), then removes the previous one."""
        stem = f"state-e{int(epoch):05d}-s{int(step):07d}"
        weights = self.directory / f"{stem}.weights.h5"
        with atomic_path(weights, suffix=".weights.h5") as temporary:
            model.save_weights(str(temporary))
        seeds = _seed_states(model)
        metrics = list(model.metrics_variables)
        arrays = {f"seed_{i}": _numpy(v) for i, v in enumerate(seeds)}
        arrays.update(
            {f"metric_{i}": _numpy(v) for i, v in enumerate(metrics)}
        )
        arrays.update(
            {f"rng_{k}": v for k, v in global_rng_state().items()}
        )
        with atomic_path(self.directory / f"{stem}.npz",
                         suffix=".npz") as temporary:
            np.savez(temporary, **arrays)
        # The position last: until it is replaced, the previous state
        # stays whole.
        write_json(self.directory / STATE_FILE, dict(
            format=FORMAT,
            epoch=int(epoch),
            step=int(step),
            stem=stem,
            seed_states=[v.path for v in seeds],
            metrics=[v.path for v in metrics],
        ))
        for path in self.directory.glob("state-*"):
            if not path.name.startswith(stem + "."):
                path.unlink(missing_ok=True)

    def read(self):
        """The saved position as a dict (`epoch`, `step`, `weights`, and
        `arrays`, the npz file or None), or None when nothing is saved.

        Raises:
            BackupError: the state names missing files, or is damaged.
        """
        state_path = self.directory / STATE_FILE
        if not state_path.exists():
            return self._read_keras_backup()
        try:
            state = json.loads(state_path.read_text())
            epoch, step, stem = state["epoch"], state["step"], state["stem"]
        except (ValueError, KeyError, TypeError) as error:
            raise BackupError(
                f"The backup state {state_path} is damaged ({error}). "
                "Remove the backup directory to train from the start."
            ) from error
        if state.get("format") != FORMAT:
            raise BackupError(
                f"The backup state {state_path} has format "
                f"{state.get('format')!r}; this version reads {FORMAT}."
            )
        weights = self.directory / f"{stem}.weights.h5"
        arrays = self.directory / f"{stem}.npz"
        for path in (weights, arrays):
            if not path.exists():
                raise BackupError(
                    f"The backup state {state_path} names {path.name}, "
                    "which is missing. Remove the backup directory to "
                    "train from the start."
                )
        return dict(epoch=int(epoch), step=int(step), weights=weights,
                    arrays=arrays, state=state)

    def _read_keras_backup(self):
        # keras.callbacks.BackupAndRestore's files: an epoch's end only.
        metadata = self.directory / "training_metadata.json"
        weights = self.directory / "latest.weights.h5"
        if not (metadata.exists() and weights.exists()):
            return None
        try:
            epoch = int(json.loads(metadata.read_text())["epoch"])
        except (ValueError, KeyError, TypeError) as error:
            raise BackupError(
                f"The backup state {metadata} is damaged ({error})."
            ) from error
        return dict(epoch=epoch, step=0, weights=weights, arrays=None,
                    state={})

    def restore(self, model, saved):
        """Loads the weights, optimizer and seed states of `saved` (from
        `read`) into the compiled `model`. Returns what is restored when
        the resumed epoch begins (`BackupCallback.resume_at`): the metric
        totals by variable path (`fit` resets the metrics as an epoch
        begins) and the global generators' state; (None, None) for a
        backup of Keras's format."""
        if model.optimizer is not None and not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)
        model.load_weights(str(saved["weights"]))
        if saved["arrays"] is None:
            return None, None
        with np.load(saved["arrays"]) as arrays:
            seeds = [arrays[f"seed_{i}"]
                     for i in range(len(saved["state"]["seed_states"]))]
            metrics = [arrays[f"metric_{i}"]
                       for i in range(len(saved["state"]["metrics"]))]
            rng = {k[len("rng_"):]: arrays[k] for k in arrays.files
                   if k.startswith("rng_")}
        # By position, count and shape (`assign_in_order`); the run
        # directory refuses other hyperparameters already.
        states = _seed_states(model)
        assign_in_order(states, seeds, lambda index: BackupError(
            f"The backup {saved['arrays']} holds the state of other "
            f"variables (shapes {[tuple(np.shape(s)) for s in seeds]}; "
            f"the model's: {[tuple(v.shape) for v in states]}): it was "
            "written by another model. Remove the backup directory to "
            "train from the start."
        ))
        return dict(zip(saved["state"]["metrics"], metrics)), rng

    def remove(self):
        if self.directory.exists():
            shutil.rmtree(self.directory)


def _assign_by_path(variables, values, source):
    # Metrics by path: their order among a model's variables is not the
    # same in every process under TensorFlow.
    paths = sorted(v.path for v in variables)
    if paths != sorted(values):
        raise BackupError(
            f"The backup {source} holds the totals of the metrics "
            f"{sorted(values)}; the model's are {paths}: it was written "
            "by another model. Remove the backup directory to train from "
            "the start."
        )
    for variable in variables:
        variable.assign(values[variable.path])


class BackupCallback(keras.callbacks.Callback):
    """Writes a `TrainingBackup` at each epoch's end and within epochs.

    Place it after the callbacks whose state it must capture (a schedule
    that updates the optimizer at an epoch's end, a checkpoint, a CSV log)
    and after a non-finite loss check, so that a non-finite state is never
    backed up. `resumable_fit` resumes from it.

    Args:
        directory: str or path. The backup's directory.
        every_seconds: float or None. Within an epoch, back up after the
            first batch that ends this long after the last backup. None:
            not by time.
        every_steps: int or None. Within an epoch, back up every this many
            batches. None: not by count.
        seed: int. Under PyTorch, the global generator (Keras's unseeded
            dropout) starts each epoch from `(seed, epoch)`, so that what
            an epoch draws does not depend on the iterators made before
            it, which a resumed run makes at other times.
    """

    def __init__(self, directory, every_seconds=300.0, every_steps=None,
                 seed=0):
        super().__init__()
        if every_seconds is not None and not every_seconds >= 0:
            raise ValueError(
                "`every_seconds` must be >= 0 or None. Received: "
                f"every_seconds={every_seconds}"
            )
        if every_steps is not None and int(every_steps) < 1:
            raise ValueError(
                "`every_steps` must be >= 1 or None. Received: "
                f"every_steps={every_steps}"
            )
        self.backup = TrainingBackup(directory)
        self.every_seconds = every_seconds
        self.every_steps = every_steps
        self.seed = int(seed)
        # Batches of the current epoch trained before this `fit` began;
        # set by `resumable_fit` for the rest of an interrupted epoch.
        self.step_offset = 0
        self._resume = None
        self._epoch = 0

    def resume_at(self, epoch, metrics, rng):
        """Restores `metrics` (totals by path) when epoch `epoch` begins,
        and the global generators' state `rng` before its first batch
        (both from `TrainingBackup.restore`; None: nothing)."""
        self._resume = (epoch, metrics, rng)

    def on_train_begin(self, logs=None):
        self._last_save = time.monotonic()
        self._since_save = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch
        seed_global_rng(np.random.default_rng((self.seed, epoch))
                        .integers(2**62))
        if self._resume is None or self._resume[0] != epoch:
            self._resume = None
        elif self._resume[1] is not None:
            _assign_by_path(self.model.metrics_variables, self._resume[1],
                            self.backup.directory)

    def on_train_batch_begin(self, batch, logs=None):
        # After the epoch's data iterators are made (each draws a seed).
        if self._resume is not None:
            if self._resume[2]:
                set_global_rng_state(self._resume[2])
            self._resume = None

    def on_train_batch_end(self, batch, logs=None):
        self._since_save += 1
        steps = self.params.get("steps")
        if (steps is not None and batch + 1 >= steps) or \
                self.model.stop_training:
            # the epoch's end is backed up in on_epoch_end (a callback
            # before this one may have ended the epoch: `StopAtStep`)
            return
        due = (self.every_steps is not None
               and self._since_save >= self.every_steps)
        due = due or (self.every_seconds is not None and
                      time.monotonic() - self._last_save
                      >= self.every_seconds)
        if due:
            self._save(self._epoch, self.step_offset + batch + 1)

    def on_epoch_end(self, epoch, logs=None):
        self._save(epoch + 1, 0)
        self.step_offset = 0

    def _save(self, epoch, step):
        self.backup.save(self.model, epoch, step)
        self._last_save = time.monotonic()
        self._since_save = 0


class _StopAtEpochEnd(keras.callbacks.Callback):
    # Ends the `fit` of an interrupted epoch's remaining batches; records
    # whether another callback had stopped training already.
    stopped_by_other = False

    def on_epoch_end(self, epoch, logs=None):
        self.stopped_by_other = bool(self.model.stop_training)
        self.model.stop_training = True


def _build_metrics(model, dataset, count):
    # Keras creates the compiled metrics' variables in the first train step
    # under TensorFlow (JAX and PyTorch build them when `fit` starts), too
    # late for their totals to be restored when the resumed epoch begins:
    # one evaluation on the dataset's first batch creates them. It changes
    # no weight and draws no random number (dropout is off), and `fit`
    # resets the metrics.
    if len(model.metrics_variables) == count:
        return
    x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(dataset[0])
    size = len(keras.tree.flatten(x)[0])
    model.evaluate(x, y, sample_weight=sample_weight, batch_size=size,
                   verbose=0)


def _truncate_csv_logs(callbacks, epoch):
    # A run killed after an epoch's CSV row but before its backup trains
    # that epoch again: keep the rows of the epochs before `epoch` only.
    for callback in callbacks:
        if not isinstance(callback, keras.callbacks.CSVLogger):
            continue
        path = Path(callback.filename)
        if not path.exists():
            continue
        with open(path, newline="") as f:
            rows = list(csv.reader(f, delimiter=callback.sep))
        if not rows or "epoch" not in rows[0]:
            continue
        column = rows[0].index("epoch")
        kept = [rows[0]] + [r for r in rows[1:] if int(r[column]) < epoch]
        if len(kept) < len(rows):
            with atomic_path(path) as temporary:
                with open(temporary, "w", newline="") as f:
                    csv.writer(f, delimiter=callback.sep).writerows(kept)


def resumable_fit(model, train, *, epochs, callbacks, validation_data=None,
                  verbose="auto", announce=print):
    """`model.fit(train, epochs=epochs, ...)`, resumed from a backup.

    `callbacks` must hold one `BackupCallback`. If its directory holds a
    backup, the model, its optimizer, seed generators and metric totals
    are restored; an epoch interrupted after `step` batches is finished on
    `train`'s batches `step:` of that epoch, then the remaining epochs run
    on `train`. `fit` is called with `shuffle=False`: `train` orders its
    batches itself, as a function of the epoch (`EpochSync` in `callbacks`
    tells it the epoch). CSV logs in `callbacks` lose the rows of epochs
    that will be trained again. The backup is left in place (see the
    module docstring).

    Args:
        model: a compiled `keras.Model`.
        train: a `keras.utils.PyDataset` of training batches.
        epochs: int. Total number of epochs.
        callbacks: list of callbacks, one of them a `BackupCallback`.
        validation_data: as for `fit`.
        verbose: as for `fit`.
        announce: `fn(str)` told where the run resumes.

    Returns:
        The position the run resumed from, `(epoch, step)`, or None.
    """
    backups = [c for c in callbacks if isinstance(c, BackupCallback)]
    if len(backups) != 1:
        raise ValueError(
            "resumable_fit needs exactly one BackupCallback in `callbacks`. "
            f"Received {len(backups)}."
        )
    backup = backups[0]
    saved = backup.backup.read()
    fit = dict(validation_data=validation_data, verbose=verbose,
               shuffle=False)
    initial_epoch = 0
    resumed = None
    if saved is not None:
        epoch, step = saved["epoch"], saved["step"]
        if step >= len(train):
            raise BackupError(
                f"The backup in {backup.backup.directory} is at batch {step} "
                f"of epoch {epoch + 1}, which has {len(train)} batches: it "
                "belongs to other data or another batch size."
            )
        resumed = (epoch, step)
        metrics, rng = backup.backup.restore(model, saved)
        _truncate_csv_logs(callbacks, epoch)
        where = (f"after batch {step} of {len(train)} of epoch {epoch + 1}"
                 if step else f"at the start of epoch {epoch + 1}")
        announce(f"Resuming from {backup.backup.directory}, {where}")
        initial_epoch = epoch
        if step and epoch < epochs:
            if hasattr(train, "set_epoch"):
                train.set_epoch(epoch)
            if metrics is not None:
                _build_metrics(model, train, len(metrics))
            backup.step_offset = step
            backup.resume_at(epoch, metrics, rng)
            stop = _StopAtEpochEnd()
            offsets = [c for c in callbacks if hasattr(c, "step_offset")]
            for callback in offsets:
                callback.step_offset = step
            try:
                model.fit(fit_input(RemainingBatches(train, step), like=train),
                          initial_epoch=epoch, epochs=epochs,
                          callbacks=list(callbacks) + [stop], **fit)
            finally:
                for callback in offsets:
                    callback.step_offset = 0
            if stop.stopped_by_other:
                return resumed
            initial_epoch = epoch + 1
    if initial_epoch < epochs:
        model.fit(train, initial_epoch=initial_epoch, epochs=epochs,
                  callbacks=list(callbacks), **fit)
    return resumed
