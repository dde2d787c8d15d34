"""`--distribute`: data-parallel training (`lra_keras.distribute`).

JAX (two host devices) and TensorFlow (two logical CPUs) run in a
subprocess, the device count being fixed before the backend starts: a
training step split over two devices must give the loss and weights of
one device; a recipe run with `--distribute` trains, and evaluates the
whole test split; TensorFlow's replicas draw dropout masks of their own.
PyTorch refuses the flag with the reason.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

from lra_keras.data import listops
from lra_keras.distribute import distribution_scope
from tests.test_recipes import _write_fixture
from tests.test_resume import _RUN
from tests.test_resume import _rows
from tests.test_resume import write_killed_run_data
from tests.testing import RELEASE_TREES_SET

ROOT = Path(__file__).resolve().parents[1]
BACKEND = keras.backend.backend()
DISTRIBUTED = pytest.mark.skipif(
    BACKEND == "torch", reason="data-parallel training is JAX's and "
    "TensorFlow's")
WORKER = str(ROOT / "tests" / "distribute_worker.py")


def _two_device_env():
    # The worker gives the backend its two devices.
    return dict(os.environ, KERAS_BACKEND=BACKEND, PYTHONPATH=str(ROOT))


def _worker_result(what, **env):
    """The worker's RESULT line for `what` (a model, or "masks"), run
    with `env` added to the two devices' environment."""
    result = subprocess.run(
        [sys.executable, WORKER, what], env=dict(_two_device_env(), **env),
        capture_output=True, text=True, timeout=600)
    lines = [line for line in result.stdout.splitlines()
             if line.startswith("RESULT ")]
    assert lines, result.stdout[-2000:] + result.stderr[-2000:]
    return json.loads(lines[-1][len("RESULT "):])


@pytest.mark.one_backend("jax", "tensorflow")
@DISTRIBUTED
@pytest.mark.parametrize("model", ["transformer", "s4d", "s4d_longest",
                                   "transformer_longest"])
def test_a_step_on_two_devices_equals_one_device(model):
    found = _worker_result(model)
    assert found["devices"] == 2
    for rows in ("rows4", "rows2"):  # split 2 + 2 and 1 + 1
        step = found[rows]
        assert step["loss_distributed"] == pytest.approx(
            step["loss_one_device"], rel=1e-6)
        assert step["moved"] > 1e-5  # the step changed the weights...
        # ...from the same gradients, by the same update (outside Adam's
        # epsilon regime: `distribute_worker.step_differences`)
        assert step["gradient_difference"] < 1e-4
        assert step["weight_difference"] < 1e-6
        assert step["near_epsilon"] <= step["weights"] // 20
    # Every row evaluated, batches of 2 + 1 and 1 + 0 rows included.
    evaluated = found["evaluation"]
    assert evaluated["one_device"]["accuracy"] == pytest.approx(4 / 7)
    for key in ("loss", "accuracy"):
        assert evaluated["distributed"][key] == pytest.approx(
            evaluated["one_device"][key], rel=1e-6)


@pytest.mark.one_backend("tensorflow")
def test_replicas_draw_dropout_masks_of_their_own():
    # The same inputs in both replicas of a MirroredStrategy: Keras's
    # dropout and the blockwise attention's weights dropout each drew one
    # seed for both, the same masks, before `distribute.replica_seed`.
    found = _worker_result("masks", KERAS_BACKEND="tensorflow")
    assert found["devices"] == 2
    masks = np.asarray(found["masks"])  # (replicas, 1, 256)
    assert set(np.unique(masks)) == {0.0, 2.0}  # rate 0.5, scaled
    for mask in masks:  # each a dropout mask: kept with probability 1/2
        assert 0.35 < np.mean(mask == 2.0) < 0.65
    # Independent masks agree at about half of the 256 places (binomial
    # sd 8); one mask drawn twice agrees at all of them.
    assert np.mean(masks[0] == masks[1]) < 0.7
    attended = np.asarray(found["attended"])
    undropped = np.asarray(found["undropped"])
    assert np.abs(attended[0] - attended[1]).max() > 0.1
    assert np.abs(attended - undropped).max() > 0.1  # it did drop


@pytest.mark.one_backend("jax", "tensorflow")
@DISTRIBUTED
def test_recipe_trains_with_distribute_on_two_devices(tmp_path):
    data_dir = tmp_path / "data"
    _write_fixture(data_dir)
    out = tmp_path / "run"
    cmd = [sys.executable, WORKER, "recipe",
           str(ROOT / "recipes" / "listops.py"),
           "--preset", "quick", "--data-dir", str(data_dir), "--out",
           str(out), "--saved-models", str(tmp_path / "saved"),
           "--distribute", "--set", "sequence_length=64", "epochs=1",
           "batch_size=8", "hidden_dim=16", "num_layers=1",
           "intermediate_dim=32", "bucket_step=16", *RELEASE_TREES_SET]
    result = subprocess.run(cmd, env=_two_device_env(), capture_output=True,
                            text=True, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[
        -3000:]
    assert "data-parallel over 2 devices: batches hold multiples" in (
        result.stdout)
    metrics = json.loads((out / "metrics.json").read_text())
    assert len(metrics["devices"]) == 2
    # The whole test split was evaluated: the accuracy is a count over
    # all of its rows.
    _, y = listops.read_tsv(data_dir / "basic_test.tsv", max_length=64)
    hits = metrics["test_accuracy"] * len(y)
    assert hits == pytest.approx(round(hits), abs=1e-3)
    # Exported outside the distribution (a SavedModel traced inside a
    # MirroredStrategy fails when called outside it); the export checks
    # its outputs against the Keras model.
    assert (tmp_path / "saved" / "listops_transformer_quick"
            / "saved_model.pb").exists()


@pytest.mark.one_backend("jax", "tensorflow")
@DISTRIBUTED
def test_distributed_run_killed_mid_epoch_resumes_to_the_same_result(
        tmp_path):
    # test_resume's SIGKILL in epoch 2 between two backups, on two
    # devices: resumed, the run ends as the one never killed.
    data_dir = write_killed_run_data(tmp_path / "data")
    script = tmp_path / "run.py"
    script.write_text(_RUN)

    def run(out, kill="-"):
        return subprocess.run(
            [sys.executable, WORKER, "recipe", str(script), str(data_dir),
             str(out), kill, "distribute"], env=_two_device_env(),
            capture_output=True, text=True, cwd=ROOT, timeout=600)

    straight = run(tmp_path / "a")
    assert straight.returncode == 0, straight.stderr[-3000:]
    assert "data-parallel over 2 devices" in straight.stdout
    killed = run(tmp_path / "b", "kill")
    assert killed.returncode == -9, killed.stderr[-3000:]
    assert not (tmp_path / "b" / "metrics.json").exists()
    resumed = run(tmp_path / "b")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "of epoch 2" in resumed.stdout
    assert _rows(tmp_path / "b") == _rows(tmp_path / "a")
    expected = json.loads((tmp_path / "a" / "metrics.json").read_text())
    got = json.loads((tmp_path / "b" / "metrics.json").read_text())
    for key in ("test_accuracy", "test_loss", "best_val_accuracy"):
        assert got[key] == expected[key], key


@pytest.mark.skipif(BACKEND != "torch",
                    reason="JAX and TensorFlow support --distribute")
def test_pytorch_refuses_distribute_with_the_reason():
    with pytest.raises(ValueError, match="not supported under the "
                       f"{keras.backend.backend()} backend"):
        with distribution_scope(True):
            pass
    with distribution_scope(False) as devices:  # off: one device
        assert devices == 1


@pytest.mark.skipif(BACKEND != "torch",
                    reason="JAX and TensorFlow support --distribute")
def test_recipe_refuses_distribute_as_a_usage_error(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "recipes" / "listops.py"),
         "--distribute"], capture_output=True, text=True, cwd=tmp_path,
        timeout=300)
    assert result.returncode == 2
    assert "--distribute is not supported" in result.stderr
