"""lra_keras: the Long Range Arena experiments in Keras 3.

The same layers, models, training techniques and recipes run under JAX,
TensorFlow and PyTorch; the backend comes from `KERAS_BACKEND`.

Submodules load on first use, so `lra_keras.data` (pure numpy) never pays
for importing a Keras backend. Load a `.keras` file we wrote with
`lra_keras.saving.load_model` (safe mode, clear errors on damaged files),
or import `lra_keras.layers` before `keras.saving.load_model` to register
our layers.
"""

import importlib

__version__ = "0.1.0"

_SUBMODULES = ("cli", "data", "export", "hparams", "layers", "models",
               "optimizers", "presets", "report", "saving", "tasks",
               "techniques", "training")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"lra_keras.{name}")
    if name == "get_hparams":
        return importlib.import_module("lra_keras.hparams").get_hparams
    raise AttributeError(f"module 'lra_keras' has no attribute {name!r}")
