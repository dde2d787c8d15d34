"""Export a `.keras` model as a TensorFlow SavedModel from any backend.

    python -m lra_keras.export MODEL.keras --out DIR

writes a SavedModel whose serving endpoint is `serve` (Keras's default),
taking the model's inputs (`token_ids` int32 and `padding_mask` bool, each
(batch, length)) and returning its outputs. Keras can export a SavedModel
only from the TensorFlow backend for every op we use, so when this runs
under JAX or PyTorch the `.keras` file is rebuilt under TensorFlow in a
subprocess: the weights and architecture are backend-independent, and the
result is the same whichever backend trained the model.
"""

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import keras

# Registers every lra_keras layer for deserialisation.
import lra_keras.layers  # noqa: F401


def _export_here(model_path, out_dir):
    model = keras.saving.load_model(model_path, safe_mode=True)
    out_dir = Path(out_dir)
    tmp = out_dir.with_name(out_dir.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    model.export(str(tmp), format="tf_saved_model", verbose=False)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.replace(tmp, out_dir)


def export_saved_model(model_path, out_dir):
    """Writes a SavedModel of the `.keras` file `model_path` to `out_dir`.

    Works under every backend (see the module docstring). Raises
    `FileNotFoundError` for a missing file and `RuntimeError` when the
    export fails.
    """
    model_path = Path(model_path)
    if not model_path.is_file():
        raise FileNotFoundError(f"No model file at {model_path}")
    if keras.backend.backend() == "tensorflow":
        _export_here(model_path, out_dir)
        return Path(out_dir)
    env = {**os.environ, "KERAS_BACKEND": "tensorflow"}
    result = subprocess.run(
        [sys.executable, "-m", "lra_keras.export", str(model_path), "--out",
         str(out_dir)],
        env=env,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"SavedModel export of {model_path} under TensorFlow failed:\n"
            f"{result.stderr[-4000:]}"
        )
    return Path(out_dir)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m lra_keras.export", description=__doc__.split("\n")[0]
    )
    parser.add_argument("model", help="path of a .keras file")
    parser.add_argument("--out", required=True, help="SavedModel directory")
    args = parser.parse_args(argv)
    out = export_saved_model(args.model, args.out)
    print(f"SavedModel written to {out} (endpoint: serve)")


if __name__ == "__main__":
    main()
