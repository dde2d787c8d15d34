"""Recipe smoke runs: the real recipes on tiny data, under this backend.

The ListOps run goes through a subprocess, as a user would, and checks the
run directory, the `.keras` file (safe mode) and the SavedModel (reloaded
with `tf.saved_model.load`, endpoint `serve`). The other recipes run
in-process (`runpy`) on fixtures written here in the official formats (text,
retrieval, image) or on freshly generated images (Pathfinder, Path-X), and
check that they train, evaluate and save a loadable model.
"""

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

from lra_keras import data
from lra_keras.data import listops
from lra_keras.data import pathfinder
from lra_keras.tasks import get_task
from tests.testing import RELEASE_TREES_SET
from tests.testing import to_numpy
from tests.testing import token_inputs
from tests.testing import write_listops_release

ROOT = Path(__file__).resolve().parents[1]


def _accuracy(model, inputs, y):
    """The classifier's accuracy on whole arrays (one batch)."""
    from lra_keras.techniques.base import predicted_classes

    predicted = predicted_classes(to_numpy(model(inputs)))
    return float(np.mean(predicted == y))


def _write_fixture(directory):
    rows = listops.generate(60, seed=5, min_length=10, max_length=60,
                            num_workers=1)
    write_listops_release(directory, rows)


@pytest.mark.one_backend
def test_listops_recipe_trains_evaluates_saves_and_exports(tmp_path):
    data_dir = tmp_path / "data"
    _write_fixture(data_dir)
    out, saved = tmp_path / "run", tmp_path / "saved_models"
    # No KERAS_MAX_STEPS_PER_EPOCH: it also cuts the evaluation short, and
    # the test accuracy is checked against the whole test split below.
    cmd = [
        sys.executable, str(ROOT / "recipes" / "listops.py"),
        "--preset", "quick", "--data-dir", str(data_dir), "--out", str(out),
        "--saved-models", str(saved), "--set", "sequence_length=64",
        "epochs=2", "batch_size=8", "hidden_dim=16", "num_layers=1",
        "intermediate_dim=32", "bucket_step=16", *RELEASE_TREES_SET,
    ]
    result = subprocess.run(cmd, capture_output=True, text=True,
                            cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[
        -3000:]
    assert "test accuracy:" in result.stdout

    config = json.loads((out / "config.json").read_text())
    assert config["backend"] == keras.backend.backend()
    assert config["hparams"]["sequence_length"] == 64
    # What --set gave, for the report (a run apart from the preset's).
    assert config["overrides"] == dict(
        sequence_length=64, epochs=2, batch_size=8, hidden_dim=16,
        num_layers=1, intermediate_dim=32, bucket_step=16, min_length=None,
        max_depth=None)
    csv_lines = (out / "metrics.csv").read_text().strip().splitlines()
    assert len(csv_lines) == 3 and "val_accuracy" in csv_lines[0]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["epochs_run"] == 2

    name = "listops_transformer_quick"
    assert (saved / f"{name}.json").is_file()
    import lra_keras.layers  # noqa: F401

    model = keras.saving.load_model(saved / f"{name}.keras", safe_mode=True)
    x, y = listops.read_tsv(data_dir / "basic_test.tsv", max_length=64)
    inputs = token_inputs(x, config["hparams"]["padding_id"])
    expected = to_numpy(model(inputs))
    # The saved model is the one evaluated, on the whole test split.
    assert metrics["test_accuracy"] == pytest.approx(
        _accuracy(model, inputs, y))

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
    """The README's main job (2-3 minutes): generate, train, evaluate,
    export, and learn: a model that ignores its input predicts one class
    (at most the majority class, 0.17 of the test trees), one that reads
    only the root operator about 0.36; the quick S4D on the shorter trees
    ends at 0.57-0.59 under the three backends (README, Set-up), so 0.45
    leaves room for seeds and thread counts."""
    env = {**os.environ, "LRA_KERAS_DATA": str(tmp_path / "cache")}
    cmd = [sys.executable, str(ROOT / "recipes" / "listops.py"), "--model",
           "s4d", "--preset", "quick", "--out", str(tmp_path / "run"),
           "--saved-models", str(tmp_path / "saved_models")]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True,
                            cwd=tmp_path, timeout=3600)
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["test_accuracy"] >= 0.45


# === The other recipes, in-process on tiny official-format fixtures ===


def _write_aclimdb(root):
    rng = np.random.default_rng(0)
    for split in ("train", "test"):
        for label in ("neg", "pos"):
            folder = root / "aclImdb" / split / label
            folder.mkdir(parents=True)
            for i in range(8):
                words = rng.choice(["good", "bad", "film", "plot"], 12)
                (folder / f"{i}_{7 if label == 'pos' else 2}.txt").write_text(
                    " ".join(words))
    return root


def _write_aan(root):
    rng = np.random.default_rng(1)
    root.mkdir(parents=True)
    for split, n in (("train", 12), ("eval", 6), ("test", 6)):
        lines = []
        for i in range(n):
            a, b = (bytes(rng.integers(97, 123, rng.integers(20, 60)))
                    .decode() for _ in range(2))
            lines.append(f"{i % 2}\tid{i}a\tid{i}b\tb'{a}'\tb'{b}'")
        (root / f"new_aan_pairs.{split}.tsv").write_text("\n".join(lines))
    return root


def _write_cifar_binary(root):
    # 5 training batches (the last 10% of them is val) and a test batch;
    # records are 1 label byte + 3072 bytes of R, G, B planes.
    folder = root / "cifar-10-batches-bin"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(2)
    names = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]
    for name in names:
        records = rng.integers(0, 256, (4, 3073), dtype=np.uint8)
        records[:, 0] %= 10
        records.tofile(folder / name)
    return root


TINY_RUN = ["--preset", "quick", "--set", "epochs=1", "batch_size=4",
            "hidden_dim=8", "num_layers=1"]
TINY_FAMILY = {"transformer": ["intermediate_dim=16", "num_heads=2"],
               "s4d": ["state_dim=4"]}


@pytest.mark.one_backend
@pytest.mark.parametrize(
    "task, writer, extra",
    [
        ("text", _write_aclimdb, ["sequence_length=64", "bucket_step=16"]),
        ("retrieval", _write_aan, ["sequence_length=48", "bucket_step=16"]),
        ("image", _write_cifar_binary, ["val_samples=None"]),
    ],
)
def test_reader_recipes_train_evaluate_and_save(task, writer, extra,
                                                tmp_path, monkeypatch):
    data_dir = writer(tmp_path / "data")
    out, saved = tmp_path / "run", tmp_path / "saved_models"
    monkeypatch.setenv("LRA_KERAS_DATA", str(tmp_path / "cache"))
    # The pair signature of retrieval is exported; the others skip it.
    export = [] if task == "retrieval" else ["--no-export"]
    monkeypatch.setattr(sys, "argv", [
        f"{task}.py", *export, *TINY_RUN, *TINY_FAMILY["transformer"],
        *extra, "train_samples=None", "test_samples=None", "--data-dir",
        str(data_dir), "--out", str(out), "--saved-models", str(saved),
    ])
    runpy.run_path(str(ROOT / "recipes" / f"{task}.py"), run_name="__main__")
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["task"] == task and metrics["epochs_run"] == 1
    import lra_keras.layers  # noqa: F401

    model = keras.saving.load_model(saved / f"{task}_transformer_quick.keras",
                                    safe_mode=True)
    towers = 2 if task == "retrieval" else 1
    assert len(model.input["token_ids"].shape) == 1 + towers
    config = json.loads((out / "config.json").read_text())["hparams"]
    x, y = data.load(task, "test", data_dir=data_dir,
                     max_length=config["sequence_length"])
    inputs = token_inputs(x, get_task(task).padding_id)
    # The saved model is the one evaluated, on the whole test split.
    assert metrics["test_accuracy"] == pytest.approx(
        _accuracy(model, inputs, y))
    if task == "retrieval":
        import tensorflow as tf

        served = tf.saved_model.load(str(saved / "retrieval_transformer_quick"))
        outputs = served.serve({k: tf.constant(v) for k, v in inputs.items()})
        np.testing.assert_allclose(np.asarray(outputs),
                                   to_numpy(model(inputs)), atol=1e-4)


@pytest.mark.one_backend
@pytest.mark.parametrize(
    "task, model, num_samples",
    [("pathfinder", "transformer", 40), ("pathx", "s4d", 10),
     ("pathx256", "s4d", 10)],
)
def test_pathfinder_recipes_generate_train_evaluate_and_save(
        task, model, num_samples, tmp_path, monkeypatch):
    out, saved = tmp_path / "run", tmp_path / "saved_models"
    monkeypatch.setenv("LRA_KERAS_DATA", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "argv", [
        f"{task}.py", "--model", model, "--no-export", *TINY_RUN,
        *TINY_FAMILY[model],
        f"num_samples={num_samples}", "--out", str(out), "--saved-models",
        str(saved),
    ])
    runpy.run_path(str(ROOT / "recipes" / f"{task}.py"), run_name="__main__")
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["task"] == task and metrics["epochs_run"] == 1
    # Generated in the official layout, then read back.
    resolution = {"pathfinder": 32, "pathx": 128, "pathx256": 256}[task]
    root = pathfinder.generated_root(resolution, 0)
    assert root.is_relative_to(tmp_path / "cache" / f"pathfinder{resolution}")
    assert list(root.glob("curv_contour_length_14/imgs/*/sample_*.png"))
    assert list(root.glob("curv_contour_length_14/metadata/*.npy"))
    import lra_keras.layers  # noqa: F401
    from lra_keras.hparams import get_hparams

    # one logit where the row follows the YCTFS code (`binary_logit`)
    width = 1 if get_hparams(task, model, "quick")["binary_logit"] else 2
    model = keras.saving.load_model(saved / f"{task}_{model}_quick.keras",
                                    safe_mode=True)
    assert model.output_shape == (None, width)


@pytest.mark.one_backend
@pytest.mark.parametrize(
    "task, flags, extra",
    [
        # The denoising loss on byte tokens.
        ("text", ["--technique", "multitask"],
         ["sequence_length=64", "bucket_step=16"]),
        # Self-pretraining on the documents of the pairs, then fine-tuning.
        ("retrieval", ["--technique", "spt"],
         ["sequence_length=48", "bucket_step=16"]),
        # The colour policy before the grayscale conversion.
        ("image", ["--augment"], ["val_samples=None"]),
        # All three difficulty sets with D4, causal self-pretraining.
        ("pathfinder", ["--augment", "--technique", "spt",
                        "--pretrain-objective", "causal"],
         ["num_samples=20"]),
    ],
)
def test_recipes_train_with_the_technique_flags(task, flags, extra,
                                                tmp_path, monkeypatch):
    writers = {"text": _write_aclimdb, "retrieval": _write_aan,
               "image": _write_cifar_binary}
    data = []
    if task in writers:
        data = ["--data-dir", str(writers[task](tmp_path / "data"))]
    out = tmp_path / "run"
    monkeypatch.setenv("LRA_KERAS_DATA", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "argv", [
        f"{task}.py", "--no-export", *flags, *TINY_RUN,
        *TINY_FAMILY["transformer"], *extra, "train_samples=None",
        "test_samples=None", "pretrain_epochs=1", *data, "--out", str(out),
        "--saved-models", str(tmp_path / "saved_models"),
    ])
    runpy.run_path(str(ROOT / "recipes" / f"{task}.py"), run_name="__main__")
    metrics = json.loads((out / "metrics.json").read_text())
    config = json.loads((out / "config.json").read_text())["hparams"]
    assert metrics["epochs_run"] == 1
    assert metrics["technique"] == config["technique"]
    assert metrics["augment"] == ("--augment" in flags)
    if "spt" in flags:
        assert (out / "pretrain" / "encoder.weights.h5").exists()
        assert metrics["pretrain_seconds"] > 0
    if "causal" in flags:
        assert config["causal"] is True
    if task == "pathfinder":
        # Trained, validated and tested on the three sets (YCTFS's code).
        assert config["train_difficulty"] == "all"
        assert config["eval_difficulty"] == "all"
        assert config["difficulty"] == "hard"


def test_pretrain_objective_needs_spt(tmp_path):
    cmd = [sys.executable, str(ROOT / "recipes" / "listops.py"),
           "--pretrain-objective", "causal"]
    result = subprocess.run(cmd, capture_output=True, text=True,
                            cwd=tmp_path, timeout=300)
    assert result.returncode != 0
    assert "--pretrain-objective needs --technique spt" in result.stderr


def test_augment_rejects_text_tasks(tmp_path):
    cmd = [sys.executable, str(ROOT / "recipes" / "text.py"), "--augment"]
    result = subprocess.run(cmd, capture_output=True, text=True,
                            cwd=tmp_path, timeout=300)
    assert result.returncode != 0
    assert "No augmentation is defined for the 'text' task" in result.stderr


@pytest.mark.one_backend("jax")
def test_compilation_cache_keeps_steps_and_changes_nothing(tmp_path):
    """`--compilation-cache DIR` writes JAX's compiled steps there; a run
    that loads them trains exactly as the one that compiled them."""
    data_dir = tmp_path / "data"
    _write_fixture(data_dir)
    cache = tmp_path / "jax_cache"
    env = {k: v for k, v in os.environ.items()
           if k != "JAX_COMPILATION_CACHE_DIR"}
    # every program, however quickly it compiles (JAX keeps those of 1 s+)
    env.update(KERAS_BACKEND="jax",
               JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
    metrics = []
    for run in ("compiles", "loads"):
        cmd = [
            sys.executable, str(ROOT / "recipes" / "listops.py"),
            "--preset", "quick", "--data-dir", str(data_dir), "--out",
            str(tmp_path / run), "--no-export", "--saved-models",
            str(tmp_path / "saved"), "--compilation-cache", str(cache),
            "--set", "sequence_length=64", "epochs=1", "batch_size=8",
            "hidden_dim=16", "num_layers=1", "intermediate_dim=32",
            "bucket_step=16", *RELEASE_TREES_SET,
        ]
        result = subprocess.run(cmd, env=env, capture_output=True,
                                text=True, cwd=tmp_path, timeout=600)
        assert result.returncode == 0, result.stderr[-3000:]
        if run == "compiles":
            entries = sorted(p.name for p in cache.iterdir())
            assert entries  # the training, evaluation and test steps
        metrics.append(json.loads((tmp_path / run / "metrics.json")
                                  .read_text()))
    assert sorted(p.name for p in cache.iterdir()) == entries
    for key in ("test_accuracy", "test_loss", "best_val_accuracy"):
        assert metrics[1][key] == metrics[0][key]


def test_compilation_cache_only_under_jax_and_never_over_a_set_one(
        tmp_path):
    from lra_keras.backend_utils import use_compilation_cache

    if keras.backend.backend() != "jax":
        assert use_compilation_cache(tmp_path) is None
        return
    import jax

    before = (jax.config.jax_compilation_cache_dir,
              jax.config.jax_enable_compilation_cache)
    try:
        jax.config.update("jax_compilation_cache_dir", str(tmp_path / "a"))
        assert use_compilation_cache(tmp_path / "b", replace=False) == str(
            tmp_path / "a")
        assert use_compilation_cache(tmp_path / "b") == str(tmp_path / "b")
        assert jax.config.jax_compilation_cache_dir == str(tmp_path / "b")
        assert use_compilation_cache(None) is None
        assert not jax.config.jax_enable_compilation_cache
    finally:
        jax.config.update("jax_compilation_cache_dir", before[0])
        jax.config.update("jax_enable_compilation_cache", before[1])
