"""The training backup (`lra_keras.training.resume`): what it saves and
refuses; a run killed after `fit` resumes without training again.

The equality of interrupted and uninterrupted runs is tested through
`run()` in tests/test_run_guards.py."""

import csv
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

from lra_keras import cli
from lra_keras.batching import RemainingBatches
from lra_keras.data import listops
from lra_keras.training import run
from lra_keras.training.resume import BackupCallback
from lra_keras.training.resume import BackupError
from lra_keras.training.resume import TrainingBackup
from lra_keras.training.resume import resumable_fit
from tests.test_run_guards import _hp
from tests.test_run_guards import _write_listops
from tests.testing import epoch_rows


def _model():
    inputs = keras.Input((4,))
    hidden = keras.layers.Dropout(0.5)(keras.layers.Dense(8)(inputs))
    model = keras.Model(inputs, keras.layers.Dense(3)(hidden))
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(
        from_logits=True), metrics=["accuracy"])
    return model


class _Batches(keras.utils.PyDataset):
    def __init__(self, n=6):
        super().__init__()
        rng = np.random.default_rng(0)
        self.x = rng.normal(size=(n, 4, 4)).astype("float32")
        self.y = rng.integers(0, 3, size=(n, 4))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]


def test_backup_round_trip_restores_weights_optimizer_and_seed_states(
        tmp_path):
    keras.utils.set_random_seed(0)
    model = _model()
    model.fit(_Batches(), epochs=1, verbose=0)
    backup = TrainingBackup(tmp_path / "backup")
    backup.save(model, epoch=1, step=3)
    expected = [keras.ops.convert_to_numpy(v) for v in model.variables]
    iterations = int(keras.ops.convert_to_numpy(model.optimizer.iterations))

    keras.utils.set_random_seed(1)
    other = _model()
    other.fit(_Batches(), epochs=2, verbose=0)  # other weights and seeds
    saved = backup.read()
    assert (saved["epoch"], saved["step"]) == (1, 3)
    metrics, _ = backup.restore(other, saved)
    for a, b in zip(expected, other.variables):
        np.testing.assert_array_equal(a, keras.ops.convert_to_numpy(b))
    assert int(keras.ops.convert_to_numpy(
        other.optimizer.iterations)) == iterations == 6
    assert sorted(metrics) == sorted(v.path for v in model.metrics_variables)
    # One state on disk: the files of earlier saves are removed.
    backup.save(other, epoch=2, step=0)
    assert sorted(p.name for p in backup.directory.iterdir()) == [
        "state-e00002-s0000000.npz", "state-e00002-s0000000.weights.h5",
        "state.json"]


def test_damaged_or_incomplete_backup_is_an_error_naming_it(tmp_path):
    model = _model()
    model.fit(_Batches(), epochs=1, verbose=0)
    backup = TrainingBackup(tmp_path / "backup")
    assert backup.read() is None
    backup.save(model, epoch=0, step=2)
    state = backup.directory / "state.json"
    text = state.read_text()
    state.write_text(text[:20])
    with pytest.raises(BackupError, match=r"state\.json is damaged"):
        backup.read()
    state.write_text(text)
    next(backup.directory.glob("*.npz")).unlink()
    with pytest.raises(BackupError, match=r"names state-e00000-s0000002"
                       r"\.npz, which is missing"):
        backup.read()


def test_backup_of_another_batch_size_is_refused(tmp_path):
    model = _model()
    model.fit(_Batches(), epochs=1, verbose=0)
    callback = BackupCallback(tmp_path / "backup")
    callback.backup.save(model, epoch=0, step=5)
    with pytest.raises(BackupError, match="at batch 5 of epoch 1, which "
                       "has 4 batches"):
        resumable_fit(model, _Batches(4), epochs=1, callbacks=[callback],
                      verbose=0)


def test_keras_backup_format_resumes_at_its_epoch(tmp_path):
    # A run interrupted under keras.callbacks.BackupAndRestore (what runs
    # used before) resumes at the epoch it recorded.
    keras.utils.set_random_seed(0)
    model = _model()
    model.fit(_Batches(), epochs=1, verbose=0)
    directory = tmp_path / "backup"
    directory.mkdir()
    model.save_weights(str(directory / "latest.weights.h5"))
    (directory / "training_metadata.json").write_text(
        json.dumps({"epoch": 1, "batch": 0}))
    expected = [keras.ops.convert_to_numpy(w) for w in model.weights]
    fresh = _model()
    epochs = []

    class Epochs(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            epochs.append(epoch)

    callback = BackupCallback(directory)
    resumed = resumable_fit(fresh, _Batches(), epochs=1,
                            callbacks=[callback, Epochs()], verbose=0)
    assert resumed == (1, 0) and epochs == []
    for a, b in zip(expected, fresh.weights):
        np.testing.assert_array_equal(a, keras.ops.convert_to_numpy(b))


def test_remaining_batches_are_the_rest_of_the_epoch():
    batches = _Batches(6)
    rest = RemainingBatches(batches, 4)
    assert len(rest) == 2
    np.testing.assert_array_equal(rest[1][0], batches[5][0])
    with pytest.raises(IndexError):
        rest[2]
    with pytest.raises(ValueError, match=r"`skip` must be in \[0, 6\)"):
        RemainingBatches(batches, 6)


class _InterruptAtTrainEnd(keras.callbacks.Callback):
    def on_train_end(self, logs=None):
        raise KeyboardInterrupt


@pytest.mark.one_backend
def test_run_killed_after_fit_resumes_without_training_again(tmp_path):
    # Killed during its final evaluation or save, a run used to train from
    # scratch when started again (Keras deleted its backup at the end of
    # fit); the backup now stays until metrics.json is written.
    data_dir = _write_listops(tmp_path / "data")
    kwargs = dict(data_dir=data_dir, saved_models_dir=None, verbose=0)
    _, expected = run("listops", _hp(), out_dir=tmp_path / "a", **kwargs)
    out = tmp_path / "b"
    with pytest.raises(KeyboardInterrupt):
        run("listops", _hp(), out_dir=out,
            callbacks=[_InterruptAtTrainEnd()], **kwargs)
    assert (out / "backup" / "state.json").exists()
    assert not (out / "metrics.json").exists()
    trained = []

    class Steps(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            trained.append(batch)

    _, metrics = run("listops", _hp(), out_dir=out, callbacks=[Steps()],
                     **kwargs)
    assert trained == []
    assert metrics["test_accuracy"] == expected["test_accuracy"]
    assert epoch_rows(out) == epoch_rows(tmp_path / "a")
    assert not (out / "backup").exists()


def test_backup_minutes_flag(monkeypatch, capsys):
    seen = {}
    monkeypatch.setattr(
        "lra_keras.training.run",
        lambda task, hp, **kwargs: seen.update(kwargs)
        or (None, dict(test_accuracy=0.5)))
    assert cli.main("listops", ["--backup-minutes", "0.5"]) == 0
    assert seen["backup_seconds"] == 30.0
    assert cli.main("listops", ["--backup-minutes", "0"]) == 0
    assert seen["backup_seconds"] is None
    for bad in ("-1", "soon", "inf"):
        with pytest.raises(SystemExit) as info:
            cli.main("listops", ["--backup-minutes", bad])
        assert info.value.code == 2
        assert "expected a number of minutes >= 0" in capsys.readouterr().err


# A run in its own process, as `python -c` would run it; with `kill`, it
# SIGKILLs itself after batch 7 of its second epoch (backups every 3
# batches: the last one after batch 6).
_RUN = """
import json, os, signal, sys
import keras
from lra_keras.hparams import get_hparams
from lra_keras.training import run

data_dir, out, kill = sys.argv[1], sys.argv[2], sys.argv[3] == "kill"
distribute = sys.argv[4:] == ["distribute"]  # tests/test_distribute.py

class Kill(keras.callbacks.Callback):
    step_offset = 0  # set by resumable_fit in a resumed epoch

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if (self.epoch, self.step_offset + batch + 1) == (1, 7):
            os.kill(os.getpid(), signal.SIGKILL)

hp = get_hparams("listops", "transformer", "quick", sequence_length=64,
                 epochs=3, batch_size=4, hidden_dim=16, num_layers=1,
                 intermediate_dim=32, bucket_step=None, dropout=0.1,
                 min_length=None, max_depth=None)
run("listops", hp, data_dir=data_dir, out_dir=out, saved_models_dir=None,
    verbose=0, backup_seconds=None, backup_steps=3,
    callbacks=[Kill()] if kill else [], distribute=distribute)
"""


def _run_process(data_dir, out, kill=False):
    return subprocess.run(
        [sys.executable, "-c", _RUN, str(data_dir), str(out),
         "kill" if kill else "-"],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        cwd=Path(__file__).resolve().parents[1],
    )


def _rows(out):
    with open(out / "metrics.csv", newline="") as f:
        return list(csv.DictReader(f))


def write_killed_run_data(data_dir):
    """The ListOps release files of the SIGKILL tests: 200 / 20 / 20
    short trees."""
    rows = listops.generate(240, seed=4, min_length=10, max_length=60,
                            num_workers=1)
    for split, part in (("train", rows[:200]), ("val", rows[200:220]),
                        ("test", rows[220:])):
        listops.write_tsv(data_dir / f"basic_{split}.tsv", part)
    return data_dir


@pytest.mark.one_backend
def test_run_killed_mid_epoch_by_sigkill_resumes_to_the_same_result(
        tmp_path):
    # As a user's run dies: SIGKILL, no exception, no clean-up, in the
    # middle of an epoch and between two backups. Started again, it
    # resumes at its last backup and ends as the run never killed.
    data_dir = write_killed_run_data(tmp_path / "data")
    straight = _run_process(data_dir, tmp_path / "a")
    assert straight.returncode == 0, straight.stderr[-3000:]

    out = tmp_path / "b"
    killed = _run_process(data_dir, out, kill=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    state = json.loads((out / "backup" / "state.json").read_text())
    assert (state["epoch"], state["step"]) == (1, 6)
    assert not (out / "metrics.json").exists()

    resumed = _run_process(data_dir, out)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "after batch 6 of 50 of epoch 2" in resumed.stdout
    assert _rows(out) == _rows(tmp_path / "a")
    expected = json.loads((tmp_path / "a" / "metrics.json").read_text())
    got = json.loads((out / "metrics.json").read_text())
    for key in ("test_accuracy", "test_loss", "best_val_accuracy",
                "epochs_run"):
        assert got[key] == expected[key], key
