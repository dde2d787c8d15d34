"""What a run refuses or stops on: a non-finite loss, a run directory
holding another run, a finished run started again."""

import json

import keras
import numpy as np
import pytest

from lra_keras.callbacks import NonFiniteLossError
from lra_keras.data import listops
from lra_keras.hparams import get_hparams
from lra_keras.training import run
from lra_keras.training.run_directory import RunDirectoryError
from lra_keras.training.run_directory import prepare
from tests.testing import RELEASE_TREES
from tests.testing import epoch_rows
from tests.testing import write_listops_release

# Full-length batches of one shape: one compilation per step function.
TINY = dict(sequence_length=64, epochs=2, batch_size=10, hidden_dim=8,
            num_layers=1, num_heads=2, intermediate_dim=16, bucket_step=None,
            **RELEASE_TREES)


def _write_listops(data_dir):
    rows = listops.generate(60, seed=2, min_length=10, max_length=60,
                            num_workers=1)
    return write_listops_release(data_dir, rows)


def _hp(**overrides):
    return get_hparams("listops", "transformer", "quick",
                       **{**TINY, **overrides})


class _PoisonWeights(keras.callbacks.Callback):
    """Sets the first weight to NaN after the first step of an epoch."""

    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_begin(self, epoch, logs=None):
        self.current = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.current == self.epoch and batch == 0:
            weight = self.model.weights[0]
            weight.assign(np.full(weight.shape, np.nan, "float32"))


@pytest.mark.one_backend
def test_non_finite_loss_stops_the_run_and_saves_nothing(tmp_path):
    data_dir = _write_listops(tmp_path / "data")
    out, saved = tmp_path / "run", tmp_path / "saved"
    with pytest.raises(NonFiniteLossError,
                       match=r"loss is nan at epoch 2, step 2: the run "
                       r"stopped\. Nothing was saved"):
        run("listops", _hp(), data_dir=data_dir, out_dir=out,
            saved_models_dir=saved, verbose=0,
            callbacks=[_PoisonWeights(epoch=1)])
    assert not (out / "model.keras").exists()
    assert not (out / "metrics.json").exists()
    assert not saved.exists()
    # The first epoch's state is kept, finite, and the run resumes from it.
    assert (out / "backup").exists()
    assert (out / "best.weights.h5").exists()
    _, metrics = run("listops", _hp(), data_dir=data_dir, out_dir=out,
                     saved_models_dir=None, verbose=0)
    assert metrics["epochs_run"] == 2
    assert np.isfinite(metrics["test_loss"])


@pytest.mark.one_backend
def test_an_exploding_learning_rate_is_stopped(tmp_path):
    data_dir = _write_listops(tmp_path / "data")
    out = tmp_path / "run"
    with pytest.raises(NonFiniteLossError, match=r"learning_rate \(now "
                       r"1e\+30\)"):
        run("listops", _hp(learning_rate=1e30, epochs=3), data_dir=data_dir,
            out_dir=out, saved_models_dir=None, verbose=0)
    assert not (out / "model.keras").exists()


@pytest.mark.one_backend
def test_finished_run_is_reported_not_trained_again(tmp_path, capsys):
    data_dir = _write_listops(tmp_path / "data")
    out = tmp_path / "run"
    kwargs = dict(data_dir=data_dir, out_dir=out, saved_models_dir=None,
                  verbose=0)
    _, first = run("listops", _hp(), **kwargs)
    files = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    capsys.readouterr()

    model, again = run("listops", _hp(), **kwargs)
    assert "holds this run, finished: test accuracy" in capsys.readouterr().out
    assert again == json.loads(json.dumps(first))
    assert {p.name: p.read_bytes()
            for p in out.iterdir() if p.is_file()} == files
    assert model.count_params() == first["num_parameters"]

    # Other settings (or another seed) are refused, naming what differs.
    with pytest.raises(RunDirectoryError,
                       match=r"finished run with other settings \(differing:"
                       r" learning_rate, seed\)"):
        run("listops", _hp(learning_rate=0.5), **{**kwargs, "seed": 1})
    assert {p.name: p.read_bytes()
            for p in out.iterdir() if p.is_file()} == files

    # overwrite=True trains a new run in its place.
    _, new = run("listops", _hp(epochs=1), overwrite=True, **kwargs)
    assert new["epochs_run"] == 1
    assert json.loads((out / "config.json").read_text())["hparams"][
        "epochs"] == 1


def test_run_directory_that_is_a_file_is_refused(tmp_path):
    path = tmp_path / "taken"
    path.write_text("not a run")
    with pytest.raises(RunDirectoryError, match="is a file"):
        run("listops", _hp(), data_dir=tmp_path, out_dir=path,
            saved_models_dir=None, verbose=0)
    assert path.read_text() == "not a run"


def _tensorboard_logs(out):
    (out / "tensorboard" / "train").mkdir(parents=True)
    (out / "tensorboard" / "train" / "events.out.tfevents.1").write_text("")


def test_tensorboard_logs_alone_are_a_run_not_started(tmp_path):
    # A run stopped before its first backup: config.json and the logs of
    # `--tensorboard`, which run() removes before training.
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text(json.dumps(dict(
        hparams=_hp(learning_rate=0.5), seed=1, data_dir=None)))
    _tensorboard_logs(out)
    assert prepare(out, _hp(), seed=0) is None


def test_overwrite_removes_the_tensorboard_logs(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text(json.dumps(dict(
        hparams=_hp(learning_rate=0.5), seed=0, data_dir=None)))
    (out / "metrics.json").write_text("{}")
    (out / "notes.txt").write_text("mine")
    _tensorboard_logs(out)
    with pytest.raises(RunDirectoryError, match="differing: learning_rate"):
        prepare(out, _hp(), seed=0)
    assert prepare(out, _hp(), seed=0, overwrite=True) is None
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_an_empty_split_is_an_error_before_training(tmp_path):
    data_dir = _write_listops(tmp_path / "data")
    (data_dir / "basic_val.tsv").write_text("Source\tTarget\n")
    # The reader refuses the header-only file, naming it (no split of the
    # release is empty); `load_splits` refuses an empty split of any task.
    with pytest.raises(ValueError, match=r"ListOps TSV .*data/basic_val\.tsv "
                       r"holds no rows"):
        run("listops", _hp(), data_dir=data_dir, out_dir=tmp_path / "run",
            saved_models_dir=None, verbose=0)


class _InterruptAfterEpoch(keras.callbacks.Callback):
    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if epoch == self.epoch:
            raise KeyboardInterrupt


class _FinalWeights(keras.callbacks.Callback):
    def on_train_end(self, logs=None):
        self.weights = [keras.ops.convert_to_numpy(w)
                        for w in self.model.weights]


@pytest.mark.one_backend
@pytest.mark.parametrize("technique, init", [("none", False),
                                             ("multitask", False),
                                             ("none", True)])
def test_resumed_run_equals_an_uninterrupted_one(tmp_path, technique, init):
    # The shuffle and the technique's masks follow Keras's epoch: a run
    # interrupted after its first epoch and resumed trains on the batches,
    # logs the losses and ends with the weights of a run that was never
    # interrupted (the random streams used to restart, so the resumed
    # epoch 2 replayed epoch 1's order and masks). A run with `init_from`
    # resumes from its backup, not from its source's weights again.
    data_dir = _write_listops(tmp_path / "data")
    kwargs = dict(data_dir=data_dir, saved_models_dir=None, verbose=0)
    source = {}
    if init:
        run("listops", _hp(epochs=1), out_dir=tmp_path / "source", seed=5,
            **kwargs)
        source = dict(init_from=str(tmp_path / "source"))
    hp = get_hparams("listops", "transformer", "quick", technique,
                     **{**TINY, "epochs": 3, "batch_size": 8, **source})
    straight = _FinalWeights()
    run("listops", hp, out_dir=tmp_path / "a", callbacks=[straight],
        **kwargs)
    with pytest.raises(KeyboardInterrupt):
        run("listops", hp, out_dir=tmp_path / "b",
            callbacks=[_InterruptAfterEpoch(0)], **kwargs)
    keras.utils.clear_session()
    resumed = _FinalWeights()
    run("listops", hp, out_dir=tmp_path / "b", callbacks=[resumed],
        **kwargs)
    assert epoch_rows(tmp_path / "b") == epoch_rows(tmp_path / "a")
    assert len(straight.weights) == len(resumed.weights)
    for a, b in zip(straight.weights, resumed.weights):
        np.testing.assert_array_equal(a, b)


class _InterruptAtStep(keras.callbacks.Callback):
    """Raises KeyboardInterrupt after batch `step` (counted from 1, over the
    whole epoch, also in a resumed epoch) of epoch `epoch`."""

    def __init__(self, epoch, step):
        super().__init__()
        self.epoch, self.step = epoch, step
        self.step_offset = 0  # set by resumable_fit in a resumed epoch

    def on_epoch_begin(self, epoch, logs=None):
        self.current = epoch

    def on_train_batch_end(self, batch, logs=None):
        if (self.current, self.step_offset + batch + 1) == (self.epoch,
                                                            self.step):
            raise KeyboardInterrupt


@pytest.mark.one_backend
@pytest.mark.parametrize("technique, bucket_step", [("none", 16),
                                                    ("multitask", None)])
def test_resumed_mid_epoch_equals_an_uninterrupted_run(tmp_path, technique,
                                                       bucket_step):
    # Killed in the middle of an epoch, between two backups (every 2
    # batches), then killed again inside the resumed part of that epoch,
    # the run ends with the logged epochs and the weights of a run never
    # interrupted: the batches already trained are skipped, the ones after
    # the last backup trained again, and the dropout seed states and the
    # epoch's metric totals restored. Keras's BackupAndRestore(save_freq)
    # restarted the epoch at its first batch. Length buckets (TensorFlow's
    # input spec of a part of an epoch) in one case.
    data_dir = _write_listops(tmp_path / "data")
    hp = get_hparams("listops", "transformer", "quick", technique,
                     **{**TINY, "epochs": 3, "batch_size": 8,
                        "dropout": 0.2, "bucket_step": bucket_step})
    kwargs = dict(data_dir=data_dir, saved_models_dir=None, verbose=0,
                  backup_seconds=None, backup_steps=2)
    straight = _FinalWeights()
    _, expected = run("listops", hp, out_dir=tmp_path / "a",
                      callbacks=[straight], **kwargs)
    out = tmp_path / "b"
    # 5 batches an epoch: killed after batch 3 of epoch 2 (backed up after
    # batch 2), then after batch 4 of epoch 2 (backed up there).
    for epoch, step, resumes_at in [(1, 3, None), (1, 4, (1, 2))]:
        with pytest.raises(KeyboardInterrupt):
            run("listops", hp, out_dir=out,
                callbacks=[_InterruptAtStep(epoch, step)], **kwargs)
        state = json.loads((out / "backup" / "state.json").read_text())
        assert (state["epoch"], state["step"]) == (1, 2 if step == 3 else 4)
        keras.utils.clear_session()
    resumed = _FinalWeights()
    _, metrics = run("listops", hp, out_dir=out, callbacks=[resumed],
                     **kwargs)
    assert epoch_rows(out) == epoch_rows(tmp_path / "a")
    assert metrics["test_accuracy"] == expected["test_accuracy"]
    assert len(straight.weights) == len(resumed.weights)
    for a, b in zip(straight.weights, resumed.weights):
        np.testing.assert_array_equal(a, b)
    # The backup goes once the results are written.
    assert not (out / "backup").exists()


@pytest.mark.one_backend
def test_self_pretraining_resumed_mid_epoch_equals_an_uninterrupted_run(
        tmp_path, monkeypatch):
    # The SPT phase resumes the same way (its own backup in pretrain/).
    from lra_keras.training import pretraining

    data_dir = _write_listops(tmp_path / "data")
    hp = get_hparams("listops", "transformer", "quick", "spt",
                     **{**TINY, "epochs": 1, "pretrain_epochs": 2,
                        "batch_size": 8, "dropout": 0.2})
    kwargs = dict(data_dir=data_dir, saved_models_dir=None, verbose=0,
                  backup_seconds=None, backup_steps=2)
    straight = _FinalWeights()
    run("listops", hp, out_dir=tmp_path / "a", callbacks=[straight],
        **kwargs)
    plain = pretraining.fit_callbacks
    monkeypatch.setattr(
        pretraining, "fit_callbacks",
        lambda *args, **kw: plain(*args, **kw) + [_InterruptAtStep(1, 3)])
    out = tmp_path / "b"
    with pytest.raises(KeyboardInterrupt):
        run("listops", hp, out_dir=out, **kwargs)
    state = json.loads(
        (out / "pretrain" / "backup" / "state.json").read_text())
    assert (state["epoch"], state["step"]) == (1, 2)
    monkeypatch.setattr(pretraining, "fit_callbacks", plain)
    keras.utils.clear_session()
    resumed = _FinalWeights()
    run("listops", hp, out_dir=out, callbacks=[resumed], **kwargs)
    assert epoch_rows(out / "pretrain") == epoch_rows(
        tmp_path / "a" / "pretrain")
    for a, b in zip(straight.weights, resumed.weights):
        np.testing.assert_array_equal(a, b)
    assert not (out / "pretrain" / "backup").exists()


def test_a_run_from_before_a_new_common_key_still_matches(tmp_path):
    # config.json written before `dtype_policy` existed: the key's default
    # is the behaviour that run had, so the same settings match; another
    # value of it differs.
    out = tmp_path / "run"
    out.mkdir()
    old = _hp()
    del old["dtype_policy"]
    (out / "config.json").write_text(json.dumps(dict(
        hparams=old, seed=0, data_dir=None)))
    (out / "metrics.json").write_text(json.dumps(dict(test_accuracy=0.5)))
    assert prepare(out, _hp(), seed=0) == dict(test_accuracy=0.5)
    with pytest.raises(RunDirectoryError, match="differing: dtype_policy"):
        prepare(out, _hp(dtype_policy="mixed_bfloat16"), seed=0)


def test_a_run_from_before_a_new_family_key_still_matches(tmp_path):
    # The same for a key of the family's (the head's `binary_logit`).
    out = tmp_path / "run"
    out.mkdir()
    old = _hp()
    assert old["binary_logit"] is False
    del old["binary_logit"]
    (out / "config.json").write_text(json.dumps(dict(
        hparams=old, seed=0, data_dir=None)))
    (out / "metrics.json").write_text(json.dumps(dict(test_accuracy=0.5)))
    assert prepare(out, _hp(), seed=0) == dict(test_accuracy=0.5)
    old["binary_logit"] = True  # a saved value still counts
    (out / "config.json").write_text(json.dumps(dict(
        hparams=old, seed=0, data_dir=None)))
    with pytest.raises(RunDirectoryError, match="differing: binary_logit"):
        prepare(out, _hp(), seed=0)


@pytest.mark.one_backend
def test_early_stopping_stops_where_an_uninterrupted_run_would(tmp_path):
    # A rate of 1e-12 keeps the validation accuracy at epoch 0's: patience
    # 2 stops after epoch 3 of 6 (epochs 2 and 3 no better). A run
    # interrupted after epoch 2 counts again from its metrics.csv and
    # stops there too.
    data_dir = _write_listops(tmp_path / "data")
    hp = _hp(epochs=6, learning_rate=1e-12, early_stopping_patience=2)
    kwargs = dict(data_dir=data_dir, saved_models_dir=None, verbose=0)
    _, metrics = run("listops", hp, out_dir=tmp_path / "a", **kwargs)
    assert metrics["epochs_run"] == 3
    assert len(epoch_rows(tmp_path / "a")) == 3
    with pytest.raises(KeyboardInterrupt):
        run("listops", hp, out_dir=tmp_path / "b",
            callbacks=[_InterruptAfterEpoch(1)], **kwargs)
    assert len(epoch_rows(tmp_path / "b")) == 2
    keras.utils.clear_session()
    _, resumed = run("listops", hp, out_dir=tmp_path / "b", **kwargs)
    assert resumed["epochs_run"] == 3
    assert resumed["test_accuracy"] == metrics["test_accuracy"]
    # Without it, every epoch runs.
    _, full = run("listops", dict(hp, early_stopping_patience=None),
                  out_dir=tmp_path / "c", **kwargs)
    assert full["epochs_run"] == 6


@pytest.mark.numpy_only
def test_recorded_commit_says_when_tracked_files_were_modified(
        tmp_path, monkeypatch):
    # config.json's `commit`: the code that ran is that commit's only when
    # no tracked file differs from it.
    import subprocess

    from lra_keras.training.run_directory import _git_commit

    # git looks no further up than tmp_path for a repository
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    assert _git_commit(tmp_path) == ""  # not a checkout
    git("init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("add", "code.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                          cwd=tmp_path, capture_output=True,
                          text=True).stdout.strip()
    assert _git_commit(tmp_path) == head
    (tmp_path / "notes.txt").write_text("untracked\n")
    assert _git_commit(tmp_path) == head
    (tmp_path / "code.py").write_text("x = 2\n")
    assert _git_commit(tmp_path) == head + "+modified"


class _FirstWeights(keras.callbacks.Callback):
    """Keeps the model's weights as training begins."""

    def on_train_begin(self, logs=None):
        self.weights = [keras.ops.convert_to_numpy(w)
                        for w in self.model.weights]


@pytest.mark.one_backend
def test_a_run_starts_from_another_runs_weights(tmp_path, capsys):
    data_dir = _write_listops(tmp_path / "data")
    kwargs = dict(data_dir=data_dir, saved_models_dir=None, verbose=0)
    first, _ = run("listops", _hp(epochs=1), out_dir=tmp_path / "seed3",
                   seed=3, **kwargs)
    start = _FirstWeights()
    # `{seed}` names the run of the same seed: a curriculum's second stage.
    hp = _hp(epochs=1, init_from=str(tmp_path / "seed{seed}"))
    run("listops", hp, out_dir=tmp_path / "then", seed=3, callbacks=[start],
        **kwargs)
    assert f"initial weights: {tmp_path / 'seed3' / 'model.keras'}" in (
        capsys.readouterr().out)
    assert len(start.weights) == len(first.weights)
    for a, b in zip(start.weights, first.weights):
        np.testing.assert_array_equal(a, keras.ops.convert_to_numpy(b))
    # Recorded as given, so that another source is another run.
    config = json.loads((tmp_path / "then" / "config.json").read_text())
    assert config["hparams"]["init_from"] == str(tmp_path / "seed{seed}")
    with pytest.raises(RunDirectoryError, match="differing: init_from"):
        run("listops", _hp(epochs=1), out_dir=tmp_path / "then", seed=3,
            **kwargs)
    # Another architecture, or no finished run, is refused before training.
    with pytest.raises(ValueError, match="another architecture"):
        run("listops", _hp(epochs=1, hidden_dim=16,
                           init_from=str(tmp_path / "seed3")),
            out_dir=tmp_path / "wider", seed=3, **kwargs)
    with pytest.raises(FileNotFoundError, match="seed4': nothing there"):
        run("listops", _hp(epochs=1, init_from=str(tmp_path / "seed{seed}")),
            out_dir=tmp_path / "other_seed", seed=4, **kwargs)
    assert not (tmp_path / "wider" / "metrics.json").exists()


def test_self_pretraining_refuses_initial_weights():
    with pytest.raises(ValueError, match="replace the self-pretrained"):
        get_hparams("listops", "transformer", "quick", technique="spt",
                    init_from="runs/listops_transformer_quick")
