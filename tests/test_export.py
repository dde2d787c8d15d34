"""SavedModel export (`lra_keras.export`) under this backend.

The full matrix (every family and head, from every backend, served by a
process without Keras) is in `test_backend_parity.py`; here: the CLI as a
user runs it, the Python API, the export check and the errors.
"""

import os
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

from lra_keras import export
from lra_keras.models import build_classifier
from lra_keras.saving import save_model
from tests.testing import to_numpy

ROOT = Path(__file__).resolve().parents[1]

# S4D: its FFT convolution (keras.ops.rfft) is what Keras's own export
# cannot trace from the PyTorch backend.
HP = dict(task="listops", model="s4d", num_classes=3, hidden_dim=8,
          num_layers=1, vocabulary_size=17, state_dim=4, init="legs",
          dt_min=1e-3, dt_max=1e-1, sequence_length=32)


def _serve(directory, inputs):
    import tensorflow as tf

    loaded = tf.saved_model.load(str(directory))
    out = loaded.serve({k: tf.constant(v) for k, v in inputs.items()})
    return np.asarray(out)


def test_cli_writes_a_serve_endpoint_under_this_backend(tmp_path):
    model = build_classifier(**HP)
    path = save_model(model, tmp_path / "model.keras")
    out = tmp_path / "saved" / "listops_s4d"
    result = subprocess.run(
        [sys.executable, "-m", "lra_keras.export", str(path), "--out",
         str(out)],
        env={**os.environ, "KERAS_BACKEND": keras.backend.backend()},
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "endpoint: serve" in result.stdout
    assert not out.with_name(out.name + ".partial").exists()
    inputs = export.probe_inputs(model, length=24, batch=3, seed=1)
    np.testing.assert_allclose(_serve(out, inputs), to_numpy(model(inputs)),
                               rtol=1e-5, atol=1e-5)


def _conv_model():
    return build_classifier(
        task="listops", model="conv", num_classes=3, hidden_dim=8,
        num_layers=1, vocabulary_size=17, kernel_size=3,
        intermediate_dim=8, sequence_length=32)


def test_export_saved_model_takes_a_model_object(tmp_path):
    model = _conv_model()
    out = export.export_saved_model(model, tmp_path / "conv")
    inputs = export.probe_inputs(model)
    np.testing.assert_allclose(_serve(out, inputs), to_numpy(model(inputs)),
                               rtol=1e-5, atol=1e-5)


def test_pixel_task_model_exports(tmp_path):
    # A Pathfinder Transformer's blocks are built without a mask
    # (`build_classifier(padded=False)`), so its encoder has an input that
    # only the pooling reads: it still exports and serves what it computes.
    model = build_classifier(
        task="pathfinder", model="transformer", num_classes=2,
        hidden_dim=8, num_layers=1, num_heads=2, intermediate_dim=16,
        vocabulary_size=257, sequence_length=32, padded=False)
    out = export.export_saved_model(model, tmp_path / "pathfinder")
    inputs = export.probe_inputs(model)
    np.testing.assert_allclose(_serve(out, inputs), to_numpy(model(inputs)),
                               rtol=1e-5, atol=1e-5)


def test_transformer_serves_any_length_in_blocks(tmp_path):
    # The SavedModel's signature leaves the length unknown. Its attention
    # takes one dense block below TENSORFLOW_CHUNKED_FROM keys and, from
    # there on, the blockwise loops XLA compiles at run time, so that
    # serving Path-X lengths needs memory linear in L
    # (docs/results/tensorflow_run_time_lengths_epyc/): the served
    # logits are the Keras model's at 16 and at 1,030 tokens, and the
    # SavedModel holds the compiled loops.
    import tensorflow as tf

    from lra_keras.layers.attention_kernels import TENSORFLOW_CHUNKED_FROM

    model = build_classifier(
        task="listops", model="transformer", num_classes=3, hidden_dim=8,
        num_layers=1, num_heads=2, intermediate_dim=8, vocabulary_size=17,
        sequence_length=None)
    out = export.export_saved_model(model, tmp_path / "transformer")
    for length in (16, TENSORFLOW_CHUNKED_FROM + 6):
        inputs = export.probe_inputs(model, length=length)
        np.testing.assert_allclose(_serve(out, inputs),
                                   to_numpy(model(inputs)), rtol=1e-5,
                                   atol=1e-5, err_msg=f"L = {length}")
    serve = tf.saved_model.load(str(out)).signatures["serving_default"]
    compiled = [f.signature.name for f in
                serve.graph.as_graph_def().library.function
                if f.attr["_XlaMustCompile"].b]
    assert compiled, "no XLA-compiled function in the SavedModel"


def test_readme_serving_snippet_runs(tmp_path):
    import tensorflow as tf

    readme = (ROOT / "README.md").read_text()
    start = readme.index("```python\nimport tensorflow as tf\nmodel = "
                         "tf.saved_model.load(DIR)")
    snippet = readme[start:].split("```")[1].removeprefix("python\n")
    model = _conv_model()
    out = export.export_saved_model(model, tmp_path / "conv")
    probe = export.probe_inputs(model)
    namespace = dict(DIR=str(out), inputs={k: tf.constant(v)
                                           for k, v in probe.items()})
    exec(snippet, namespace)
    np.testing.assert_allclose(np.asarray(namespace["logits"]),
                               to_numpy(model(probe)), rtol=1e-5, atol=1e-5)


def test_probe_inputs_follow_the_model():
    pairs = build_classifier(**{**HP, "towers": 2})
    x = export.probe_inputs(pairs, length=12)
    assert x["token_ids"].shape == (2, 2, 12)
    assert x["token_ids"].max() < 17 and x["token_ids"].dtype == np.int32
    assert not x["padding_mask"][1, :, -3:].any()
    assert (x["token_ids"][~x["padding_mask"]] == 0).all()
    assert x["padding_mask"][0].all()


def test_compare_names_the_disagreement():
    a = {"logits": np.zeros((2, 3), np.float32)}
    export._compare({"logits": a["logits"] + 1e-7}, a, "m.keras")
    with pytest.raises(RuntimeError, match="max abs difference 0.1"):
        export._compare({"logits": a["logits"] + 0.1}, a, "m.keras")
    with pytest.raises(RuntimeError, match="shape"):
        export._compare({"logits": np.zeros((2, 4))}, a, "m.keras")
    with pytest.raises(RuntimeError, match="2 outputs"):
        export._compare({"a": a["logits"], "b": a["logits"]}, a, "m.keras")


@pytest.mark.skipif(
    keras.backend.backend() != "tensorflow",
    reason="the in-process export path; other backends export in a "
    "TensorFlow subprocess (tested above)",
)
def test_failed_check_leaves_the_previous_export(tmp_path, monkeypatch):
    model = build_classifier(**HP)
    path = save_model(model, tmp_path / "model.keras")
    out = tmp_path / "saved"
    export.export_saved_models([(path, out)])
    before = sorted(p.name for p in out.rglob("*"))

    def disagree(*args):
        raise RuntimeError("disagrees with the Keras model")

    monkeypatch.setattr(export, "_compare", disagree)
    with pytest.raises(RuntimeError, match="disagrees"):
        export.export_saved_models([(path, out)])
    assert sorted(p.name for p in out.rglob("*")) == before
    assert not out.with_name("saved.partial").exists()


def test_cli_errors(tmp_path, capsys):
    model = build_classifier(**HP)
    path = save_model(model, tmp_path / "model.keras")
    with pytest.raises(SystemExit) as exit_info:
        export.main([str(path), str(path), "--out", "a"])
    assert exit_info.value.code == 2
    assert "one --out per model" in capsys.readouterr().err
    cut = tmp_path / "cut.keras"
    cut.write_bytes(path.read_bytes()[:500])
    assert export.main([str(cut), "--out", str(tmp_path / "x")]) == 1
    assert "truncated" in capsys.readouterr().err
    missing = tmp_path / "missing.keras"
    assert export.main([str(missing), "--out", str(tmp_path / "x")]) == 1
    assert "No model file" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    assert export.export_saved_models([]) == []
