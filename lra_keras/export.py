"""Export `.keras` models as TensorFlow SavedModels from any backend.

    python -m lra_keras.export MODEL.keras --out DIR
    python -m lra_keras.export A.keras B.keras --out DIR_A --out DIR_B

writes a SavedModel whose serving endpoint is `serve` (Keras's default),
taking the model's inputs (`token_ids` int32 and `padding_mask` bool, each
(batch, length), or (batch, 2, length) for retrieval pairs) and returning
its outputs, whatever backend the command runs under.

Why a rebuild: Keras exports a SavedModel by tracing the model with
TensorFlow ops, which works from the TensorFlow backend for every op we use
but not from the others (`model.export(format="tf_saved_model")` under
PyTorch fails on `keras.ops.rfft`, which our FFT convolutions use). The
`.keras` file is backend-independent, so under JAX or PyTorch it is rebuilt
under TensorFlow in one subprocess for all the models asked for. The result
does not depend on the backend that trained the model.

Every export is checked before it replaces `DIR`: the SavedModel is
reloaded with `tf.saved_model.load` and its `serve` endpoint must give the
Keras model's outputs on a probe batch.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import keras
import numpy as np

from lra_keras.saving import check_keras_file
from lra_keras.saving import load_model
from lra_keras.saving import save_model

# Tolerances of the export check: the same TensorFlow ops, run eagerly by
# Keras and as a traced graph by TensorFlow (which may fuse them).
VERIFY_RTOL = 1e-4
VERIFY_ATOL = 1e-5


def _all_layers(model):
    for layer in model.layers:
        yield layer
        if isinstance(layer, keras.Model):
            yield from _all_layers(layer)


def probe_inputs(model, length=16, batch=2, seed=0):
    """A batch of valid inputs for `model`: token ids below every
    embedding's vocabulary, the second row padded over its last quarter."""
    spec = model.input["token_ids"].shape  # (None, [towers,] length)
    vocabulary = min(
        (layer.input_dim for layer in _all_layers(model)
         if isinstance(layer, keras.layers.Embedding)),
        default=2,
    )
    shape = (batch, *spec[1:-1], spec[-1] or length)
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(1, max(vocabulary, 2), size=shape)
    mask = np.ones(shape, bool)
    mask[-1, ..., shape[-1] - shape[-1] // 4:] = False
    token_ids[~mask] = 0
    return {"token_ids": token_ids.astype("int32"), "padding_mask": mask}


def _compare(served, expected, model_path):
    """Raises `RuntimeError` unless the SavedModel's outputs match."""
    served_flat = [np.asarray(x) for x in keras.tree.flatten(served)]
    expected_flat = [keras.ops.convert_to_numpy(x)
                     for x in keras.tree.flatten(expected)]
    if len(served_flat) != len(expected_flat):
        raise RuntimeError(
            f"The SavedModel of {model_path} returns {len(served_flat)} "
            f"outputs, the Keras model {len(expected_flat)}."
        )
    for got, want in zip(served_flat, expected_flat):
        if got.shape != want.shape:
            raise RuntimeError(
                f"The SavedModel of {model_path} returns shape {got.shape} "
                f"where the Keras model returns {want.shape}."
            )
        if not np.allclose(got, want, rtol=VERIFY_RTOL, atol=VERIFY_ATOL):
            raise RuntimeError(
                f"The SavedModel of {model_path} disagrees with the Keras "
                "model on a probe batch (max abs difference "
                f"{np.max(np.abs(got - want)):.3g})."
            )


def _export_here(model_path, out_dir, verify=True):
    """Export under the TensorFlow backend, in this process."""
    import tensorflow as tf

    model = load_model(model_path, compile=False)
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.with_name(out_dir.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        model.export(str(tmp), format="tf_saved_model", verbose=False)
        if verify:
            inputs = probe_inputs(model)
            reloaded = tf.saved_model.load(str(tmp))
            served = reloaded.serve(
                {k: tf.constant(v) for k, v in inputs.items()}
            )
            _compare(served, model(inputs, training=False), model_path)
    except Exception as error:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(error, RuntimeError):
            raise
        raise RuntimeError(
            f"Exporting {model_path} failed: {type(error).__name__}: {error}"
        ) from error
    shutil.rmtree(out_dir, ignore_errors=True)
    os.replace(tmp, out_dir)
    return out_dir


def export_saved_models(jobs, *, verify=True):
    """Writes one SavedModel per `(model_path, out_dir)` pair of `jobs`.

    Under TensorFlow this runs here; under JAX or PyTorch, in one
    TensorFlow subprocess for all pairs (see the module docstring).

    Returns:
        The list of SavedModel directories.

    Raises:
        FileNotFoundError: a missing model file.
        ModelFileError: a truncated or corrupt model file.
        RuntimeError: the export, or its check, failed.
    """
    jobs = [(Path(model), Path(out)) for model, out in jobs]
    if not jobs:
        return []
    for model_path, _ in jobs:
        check_keras_file(model_path)
    if keras.backend.backend() == "tensorflow":
        return [_export_here(m, o, verify) for m, o in jobs]
    cmd = [sys.executable, "-m", "lra_keras.export"]
    cmd += [str(m) for m, _ in jobs]
    for _, out in jobs:
        cmd += ["--out", str(out)]
    if not verify:
        cmd.append("--no-verify")
    result = subprocess.run(
        cmd,
        env={**os.environ, "KERAS_BACKEND": "tensorflow"},
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(
            "SavedModel export under TensorFlow (a subprocess, as this "
            f"process runs {keras.backend.backend()}) failed:\n"
            f"{result.stderr[-4000:]}"
        )
    return [out for _, out in jobs]


def export_saved_model(model, out_dir, *, verify=True):
    """Writes a SavedModel of `model` (a `.keras` path or a `keras.Model`
    built from lra_keras layers) to `out_dir`, under any backend.

    Returns:
        `Path(out_dir)`.
    """
    if isinstance(model, keras.Model):
        with tempfile.TemporaryDirectory() as tmp:
            path = save_model(model, Path(tmp) / "model.keras")
            return export_saved_models([(path, out_dir)], verify=verify)[0]
    return export_saved_models([(model, out_dir)], verify=verify)[0]


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m lra_keras.export",
        description="Export .keras models as TensorFlow SavedModels "
        "(endpoint `serve`) under any backend.",
    )
    parser.add_argument("models", nargs="+", metavar="MODEL.keras",
                        help="path of a .keras file")
    parser.add_argument("--out", action="append", required=True,
                        metavar="DIR",
                        help="SavedModel directory, one per model, in order")
    parser.add_argument("--no-verify", action="store_true",
                        help="skip reloading the SavedModel and comparing "
                        "its outputs with the Keras model's")
    args = parser.parse_args(argv)
    if len(args.out) != len(args.models):
        parser.error(
            f"{len(args.models)} models but {len(args.out)} --out "
            "directories: give one --out per model, in the same order."
        )
    try:
        outs = export_saved_models(zip(args.models, args.out),
                                   verify=not args.no_verify)
    except (FileNotFoundError, ValueError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for out in outs:
        print(f"SavedModel written to {out} (endpoint: serve)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
