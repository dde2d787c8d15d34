"""Recipe smoke runs: the real CLI on tiny fixture data, under this backend.

Each run trains a tiny model for two steps on official-format TSVs written
here, then checks the run directory, the `.keras` file (safe mode) and the
SavedModel (reloaded with `tf.saved_model.load`, endpoint `serve`).
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
from lra_keras.training import model_inputs
from tests.testing import to_numpy

ROOT = Path(__file__).resolve().parents[1]


def _write_fixture(directory):
    rows = listops.generate(60, seed=5, min_length=10, max_length=60,
                            num_workers=1)
    for split, part in (("train", rows[:40]), ("val", rows[40:50]),
                        ("test", rows[50:])):
        listops.write_tsv(directory / f"basic_{split}.tsv", part)


def test_listops_recipe_trains_evaluates_saves_and_exports(tmp_path):
    data_dir = tmp_path / "data"
    _write_fixture(data_dir)
    out, saved = tmp_path / "run", tmp_path / "saved_models"
    env = {**os.environ, "KERAS_MAX_STEPS_PER_EPOCH": "2"}
    cmd = [
        sys.executable, str(ROOT / "recipes" / "listops.py"),
        "--preset", "quick", "--data-dir", str(data_dir), "--out", str(out),
        "--saved-models", str(saved), "--set", "sequence_length=64",
        "epochs=2", "batch_size=8", "hidden_dim=16", "num_layers=1",
        "intermediate_dim=32", "bucket_step=16",
    ]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True,
                            cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[
        -3000:]
    assert "test accuracy:" in result.stdout

    config = json.loads((out / "config.json").read_text())
    assert config["backend"] == keras.backend.backend()
    assert config["hparams"]["sequence_length"] == 64
    csv_lines = (out / "metrics.csv").read_text().strip().splitlines()
    assert len(csv_lines) == 3 and "val_accuracy" in csv_lines[0]
    metrics = json.loads((out / "metrics.json").read_text())
    assert 0.0 <= metrics["test_accuracy"] <= 1.0
    assert metrics["epochs_run"] == 2

    name = "listops_transformer_quick"
    assert (saved / f"{name}.json").is_file()
    import lra_keras.layers  # noqa: F401

    model = keras.saving.load_model(saved / f"{name}.keras", safe_mode=True)
    x, _ = listops.read_tsv(data_dir / "basic_test.tsv", max_length=64)
    inputs = model_inputs(x, config["hparams"])
    expected = to_numpy(model(inputs))

    import tensorflow as tf

    serving = tf.saved_model.load(str(saved / name))
    served = serving.serve(
        {k: tf.constant(v) for k, v in inputs.items()}
    )
    np.testing.assert_allclose(np.asarray(served), expected, atol=1e-4)


def test_recipe_rejects_unknown_override(tmp_path):
    cmd = [sys.executable, str(ROOT / "recipes" / "listops.py"), "--set",
           "hiden_dim=3"]
    result = subprocess.run(cmd, capture_output=True, text=True,
                            cwd=tmp_path, timeout=300)
    assert result.returncode != 0
    assert "Unknown config key" in result.stderr


@pytest.mark.large
def test_quick_preset_on_generated_listops(tmp_path):
    """The README's main job (minutes): generate, train, evaluate, export."""
    env = {**os.environ, "LRA_KERAS_DATA": str(tmp_path / "cache")}
    cmd = [sys.executable, str(ROOT / "recipes" / "listops.py"), "--preset",
           "quick", "--out", str(tmp_path / "run"), "--saved-models",
           str(tmp_path / "saved_models")]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True,
                            cwd=tmp_path, timeout=3600)
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    # Chance level is 0.1; the majority class (9 or 0) is ~0.17.
    assert metrics["test_accuracy"] > 0.1
