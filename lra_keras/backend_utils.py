"""The only backend-specific code in lra_keras, with keras.ops fallbacks.

- Keras lists devices through `keras.distribution.list_devices()`, which
  the PyTorch backend does not implement; there we ask torch directly.
- TensorFlow differentiates a gather (an `Embedding`) into a
  `tf.IndexedSlices`, one slice per occurrence of a row; `dense_gradient`
  sums them into the dense gradient JAX and PyTorch compute.
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


def dense_gradient(gradient):
    """The gradient as a dense tensor: a `tf.IndexedSlices` (TensorFlow)
    becomes the dense sum of its slices, duplicate rows added; anything
    else (every gradient under JAX and PyTorch) is returned unchanged."""
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        if isinstance(gradient, tf.IndexedSlices):
            return tf.convert_to_tensor(gradient)
    return gradient
