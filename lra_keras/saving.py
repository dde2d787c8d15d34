"""Saving and loading `.keras` files: atomic writes, checked reads.

A `.keras` file is a zip archive holding `config.json` (the architecture)
and `model.weights.h5`. Keras reports a truncated archive as "File not
found" and a damaged one with a bare zip or HDF5 error; `load_model` checks
the archive first and names what is wrong. `save_model` writes next to the
target and renames, so an interrupted save never leaves a partial file
where a model was.
"""

import zipfile
from pathlib import Path

import keras
import numpy as np

from lra_keras._atomic import atomic_path

REQUIRED_MEMBERS = ("config.json", "model.weights.h5")


class ModelFileError(ValueError):
    """A `.keras` file that cannot be read: truncated, corrupt or not one."""


def _bad(path, why):
    return ModelFileError(
        f"{path} is not a readable .keras file: {why}. Save the model "
        "again (or copy the file again from where it was saved)."
    )


def check_keras_file(path):
    """Raises `FileNotFoundError` or `ModelFileError` unless `path` is a
    complete `.keras` archive whose members pass their CRC checks."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"No model file at {path}")
    if path.is_dir():
        raise ModelFileError(
            f"{path} is a directory, not a .keras file. A SavedModel "
            "directory is for serving: load it with tf.saved_model.load."
        )
    if path.name.endswith(".weights.h5"):
        raise ModelFileError(
            f"{path} holds weights only. Build the model (for a run, from "
            "the hyperparameters in its config.json) and call "
            "model.load_weights on it."
        )
    if path.stat().st_size == 0:
        raise _bad(path, "the file is empty")
    if not zipfile.is_zipfile(path):
        raise _bad(
            path,
            "it is not a complete zip archive (a truncated file, from an "
            "interrupted save or copy, or another format)",
        )
    if not _end_record_ends_file(path):
        raise _bad(
            path,
            "the zip archive's end record does not end the file (bytes "
            "appended, or the record is damaged)",
        )
    try:
        with zipfile.ZipFile(path) as archive:
            missing = [m for m in REQUIRED_MEMBERS
                       if m not in archive.namelist()]
            if missing:
                raise _bad(path, f"the archive lacks {missing}")
            damaged = archive.testzip()
    except ModelFileError:
        raise
    except Exception as error:  # zipfile raises many kinds on a bad header
        raise _bad(
            path,
            f"the archive is damaged ({type(error).__name__}: {error})",
        ) from error
    if damaged is not None:
        raise _bad(path, f"its member {damaged!r} fails the CRC check "
                         "(the file is corrupt)")


def _end_record_ends_file(path):
    # zipfile finds the end-of-central-directory record anywhere in the
    # last 64 KiB and ignores what follows it and its comment, so a file
    # with bytes appended reads as complete.
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        f.seek(max(0, size - 22 - 0xFFFF))
        tail = f.read()
    end = tail.rfind(b"PK\x05\x06")
    comment = int.from_bytes(tail[end + 20 : end + 22], "little")
    return end >= 0 and end + 22 + comment == len(tail)


def load_model(path, *, safe_mode=True, compile=True):
    """Loads a `.keras` file written by lra_keras (or any Keras 3 model
    built from registered layers), with `safe_mode=True` by default.

    Raises:
        FileNotFoundError: nothing at `path`.
        ModelFileError: a truncated, corrupt or non-`.keras` file.
    """
    check_keras_file(path)
    # Registers every lra_keras layer and optimizer for deserialisation.
    import lra_keras.layers  # noqa: F401
    import lra_keras.optimizers  # noqa: F401

    try:
        return keras.saving.load_model(
            str(path), safe_mode=safe_mode, compile=compile
        )
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise _bad(path, f"reading it failed ({error})") from error


def save_model(model, path):
    """`model.save(path)` through a temporary file and a rename."""
    path = Path(path)
    if path.suffix != ".keras":
        raise ValueError(
            f"A model file must end in .keras. Received: path={path}"
        )
    # Keras checks the extension, so the temporary name ends in .keras too.
    with atomic_path(path, suffix=".keras") as temporary:
        model.save(str(temporary))
    return path


def assign_in_order(variables, values, mismatch):
    """Assigns `values` (arrays) to `variables` one by one, position by
    position, as a model of the same architecture saved them: Keras
    numbers the names of layers and seed generators per process
    (`seed_generator_2` in one, `_5` in the next), so names cannot pair
    them. Nothing is assigned unless every shape and the count agree.

    Args:
        variables: list of Keras variables.
        values: list of arrays, in the same order.
        mismatch: callable(index) -> the exception to raise: `index` is
            the first position whose shapes differ, or None when the
            shapes agree as far as both go and only the counts differ.
    """
    for index, (variable, value) in enumerate(zip(variables, values)):
        if tuple(variable.shape) != tuple(np.shape(value)):
            raise mismatch(index)
    if len(variables) != len(values):
        raise mismatch(None)
    for variable, value in zip(variables, values):
        variable.assign(value)


def load_initial_weights(model, source):
    """Sets `model`'s weights to those of a saved model of the same
    architecture: the `hp["init_from"]` of a run (fine-tuning, or a
    curriculum such as easy Pathfinder images before hard ones).

    Args:
        model: a built Keras model.
        source: str or path. A finished run's directory (its
            `model.keras`) or a `.keras` file.

    Returns:
        The `.keras` file read.

    Raises:
        FileNotFoundError: nothing at `source`, or a directory without
            `model.keras` (a run not finished, or not a run).
        ModelFileError: a truncated, corrupt or non-`.keras` file.
        ValueError: a saved model of another architecture (its weights
            differ in number or shape; the first difference is named).
    """
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(
            f"init_from={str(source)!r}: nothing there (a finished run's "
            "directory or a .keras file was expected)."
        )
    if path.is_dir():
        path = path / "model.keras"
        if not path.exists():
            raise FileNotFoundError(
                f"init_from={str(source)!r} is a directory without "
                "model.keras: it holds no finished run (an interrupted one "
                "saves its model only when it finishes; run it to the end "
                "first)."
            )
    saved = load_model(path, compile=False)
    values = [keras.ops.convert_to_numpy(w) for w in saved.weights]
    names = [w.path for w in saved.weights]
    del saved
    weights = model.weights

    def mismatch(index):
        if index is None:
            return ValueError(
                f"init_from={str(source)!r} holds a model of another "
                f"architecture: {len(values)} weights, this model "
                f"{len(weights)}. Start from a run with the same model "
                "hyperparameters."
            )
        return ValueError(
            f"init_from={str(source)!r} holds a model of another "
            f"architecture: its weight {index} ({names[index]}) has "
            f"shape {values[index].shape}, this model's "
            f"({weights[index].path}) {tuple(weights[index].shape)}. Start "
            "from a run with the same model hyperparameters."
        )

    assign_in_order(weights, values, mismatch)
    return path
