"""Shared test helpers (kept in the repo instead of keras.src.testing)."""

import numpy as np
from keras import ops


def to_numpy(x):
    return np.asarray(ops.convert_to_numpy(x))


def assert_allclose(actual, expected, atol=1e-6, rtol=1e-5, err_msg=""):
    np.testing.assert_allclose(
        to_numpy(actual), to_numpy(expected), atol=atol, rtol=rtol,
        err_msg=err_msg,
    )


def assert_saving_round_trip(model, inputs, tmp_path, atol=1e-6):
    """`.keras` save + load (safe mode) gives equal outputs."""
    import keras

    import lra_keras.layers  # noqa: F401  (registers the layers)

    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert_allclose(loaded(inputs), model(inputs), atol=atol, rtol=0)
    return loaded


def assert_config_round_trip(layer):
    """`from_config(get_config())` rebuilds an equal config."""
    config = layer.get_config()
    rebuilt = type(layer).from_config(config)
    assert rebuilt.get_config() == config
    return rebuilt


def value_and_grads(fn, *args):
    """fn(*args) -> scalar; returns (value, [d value / d arg]) as numpy.

    Tests may use backend APIs (library code may not): this is the one place
    that differentiates under each backend.
    """
    import keras

    backend = keras.backend.backend()
    args = [np.asarray(a, dtype="float32") for a in args]
    if backend == "jax":
        import jax

        value, grads = jax.value_and_grad(
            lambda *a: fn(*a), argnums=tuple(range(len(args)))
        )(*args)
    elif backend == "tensorflow":
        import tensorflow as tf

        tensors = [tf.constant(a) for a in args]
        with tf.GradientTape() as tape:
            tape.watch(tensors)
            value = fn(*tensors)
        grads = tape.gradient(value, tensors)
    elif backend == "torch":
        import torch

        tensors = [torch.tensor(a, requires_grad=True) for a in args]
        value = fn(*tensors)
        grads = torch.autograd.grad(value, tensors)
        value = value.detach()
    else:
        raise ValueError(f"Unsupported backend {backend!r}")
    return to_numpy(value), [to_numpy(g) for g in grads]
