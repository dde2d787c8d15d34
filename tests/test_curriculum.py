"""A curriculum in one run (`curriculum_epochs`): easy Pathfinder images
first, then the hard ones from the first stage's best weights."""

import json

import keras
import numpy as np
import pytest

from lra_keras.hparams import get_hparams
from lra_keras.saving import load_model
from lra_keras.training import run
from tests.testing import CountBatches
from tests.testing import epoch_rows

# 40 images a difficulty: 32 train (4 batches of 8) / 4 val / 4 test;
# dropout, so that the second stage must draw as a run of its own would.
TINY = dict(num_samples=40, batch_size=8, hidden_dim=8, num_layers=1,
            state_dim=4, warmup_steps=2, dropout=0.2)


def _hp(**overrides):
    return get_hparams("pathfinder", "s4d", "quick", **{**TINY, **overrides})


def _weights(path):
    return [keras.ops.convert_to_numpy(w)
            for w in load_model(path, compile=False).weights]


class _InterruptSecondFit(keras.callbacks.Callback):
    """Raises KeyboardInterrupt after the first batch of the second fit it
    is given to (the second stage of a curriculum)."""

    def __init__(self):
        super().__init__()
        self.fits = 0

    def on_train_begin(self, logs=None):
        self.fits += 1

    def on_train_batch_end(self, batch, logs=None):
        if self.fits == 2:
            raise KeyboardInterrupt


@pytest.mark.one_backend
def test_one_run_curriculum_equals_its_two_runs_and_resumes(
        tmp_path, monkeypatch):
    # The stage and the `init_from` run of the two-command curriculum,
    # then the same in one run, interrupted in its second stage and
    # started again: the finished first stage is not trained again, and
    # both stages log, test and end as the two runs did.
    monkeypatch.setenv("LRA_KERAS_DATA", str(tmp_path / "cache"))
    kwargs = dict(saved_models_dir=None, verbose=0, seed=3)
    _, easy = run("pathfinder", _hp(difficulty="easy", epochs=2),
                  out_dir=tmp_path / "easy", **kwargs)
    _, hard = run("pathfinder",
                  _hp(epochs=2, init_from=str(tmp_path / "easy")),
                  out_dir=tmp_path / "hard", **kwargs)

    hp = _hp(epochs=2, curriculum_epochs=2)
    one = tmp_path / "one"
    with pytest.raises(KeyboardInterrupt):
        run("pathfinder", hp, out_dir=one, callbacks=[_InterruptSecondFit()],
            **kwargs)
    assert (one / "curriculum" / "metrics.json").exists()
    assert not (one / "metrics.json").exists()
    count = CountBatches()
    _, metrics = run("pathfinder", hp, out_dir=one, callbacks=[count],
                     **kwargs)
    assert count.batches == 2 * 4  # the second stage's 2 epochs alone

    stage = json.loads((one / "curriculum" / "config.json").read_text())
    assert stage["hparams"]["difficulty"] == "easy"
    assert stage["hparams"]["curriculum_epochs"] is None
    assert epoch_rows(one / "curriculum") == epoch_rows(tmp_path / "easy")
    assert epoch_rows(one) == epoch_rows(tmp_path / "hard")
    assert metrics["curriculum_test_accuracy"] == easy["test_accuracy"]
    assert metrics["test_accuracy"] == hard["test_accuracy"]
    assert metrics["test_loss"] == hard["test_loss"]
    assert metrics["curriculum_seconds"] == json.loads(
        (one / "curriculum" / "metrics.json").read_text())["wall_seconds"]
    for a, b in zip(_weights(one / "model.keras"),
                    _weights(tmp_path / "hard" / "model.keras"),
                    strict=True):
        np.testing.assert_array_equal(a, b)


def test_curriculum_needs_difficulty_sets_and_no_self_pretraining():
    with pytest.raises(ValueError, match="only the Pathfinder tasks"):
        get_hparams("listops", "s4d", "quick", curriculum_epochs=1)
    with pytest.raises(ValueError, match="technique='spt'"):
        get_hparams("pathfinder", "transformer", "quick", "spt",
                    curriculum_epochs=1)
    with pytest.raises(ValueError, match="curriculum_difficulty='all'"):
        get_hparams("pathfinder", "s4d", "quick", curriculum_epochs=1,
                    curriculum_difficulty="all")
    assert get_hparams("pathx", "s4d", "quick",
                       curriculum_epochs=1)["curriculum_epochs"] == 1
