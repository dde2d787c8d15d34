"""The only backend-specific code in lra_keras, with keras.ops fallbacks.

Keras lists devices through `keras.distribution.list_devices()`, which the
PyTorch backend does not implement; there we ask torch directly.
"""

import keras


def list_devices():
    """Devices of the current backend, e.g. `["cpu:0"]` or `["gpu:0"]`."""
    if keras.backend.backend() == "torch":
        import torch

        if torch.cuda.is_available():
            return [f"gpu:{i}" for i in range(torch.cuda.device_count())]
        return ["cpu:0"]
    return list(keras.distribution.list_devices())


def on_accelerator():
    """Whether the current backend computes on something other than a CPU."""
    return any(not d.lower().startswith("cpu") for d in list_devices())
