"""Shared test helpers (kept in the repo instead of keras.src.testing)."""

import csv

import keras
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


def numpy_gelu(x):
    """Exact (erf) GELU, Keras's default."""
    from math import erf
    from math import sqrt

    x = np.asarray(x, dtype="float64")
    return 0.5 * x * (1.0 + np.vectorize(erf)(x / sqrt(2.0)))


def numpy_layer_norm(x, gamma, beta, epsilon=1e-5):
    """LayerNorm over the last axis, Keras's formula."""
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + epsilon) * gamma + beta


def numpy_causal_conv(u, k, k_back=None):
    """Direct convolution over time: u (B, L, C), k (C, L) lag 0 first;
    k_back (C, L) applies to the future, lag 1 first."""
    u = np.asarray(u, dtype="float64")
    batch, length, channels = u.shape
    y = np.zeros_like(u)
    for t in range(length):
        for s in range(length):
            if s <= t:
                y[:, t] += u[:, s] * k[:, t - s]
            elif k_back is not None:
                y[:, t] += u[:, s] * k_back[:, s - t - 1]
    return y


def sequence_model(layer, hidden_dim, with_mask=True):
    """Wraps a mixer in a functional model with dynamic length."""
    import keras

    x = keras.Input((None, hidden_dim), name="x")
    inputs = [x]
    if with_mask:
        mask = keras.Input((None,), dtype="bool", name="mask")
        inputs.append(mask)
        y = layer(x, padding_mask=mask)
    else:
        y = layer(x)
    return keras.Model(inputs if with_mask else x, y)


def fit_one_step(layer, hidden_dim, length=12, batch=2, seed=0):
    """Fits a dynamic-length model around `layer` for one step.

    Returns (loss, fraction of weights that changed). Padding is at the
    end of the second row.
    """
    rng = np.random.default_rng(seed)
    model = sequence_model(layer, hidden_dim)
    x = rng.normal(size=(batch, length, hidden_dim)).astype("float32")
    mask = np.ones((batch, length), bool)
    mask[-1, length // 2:] = False
    y = rng.normal(size=(batch, length, hidden_dim)).astype("float32")
    model.compile(optimizer="adam", loss="mse")
    before = [to_numpy(w).copy() for w in model.trainable_weights]
    history = model.fit([x, mask], y, epochs=1, batch_size=batch, verbose=0)
    after = [to_numpy(w) for w in model.trainable_weights]
    changed = np.mean([not np.array_equal(a, b)
                       for a, b in zip(before, after)])
    return history.history["loss"][-1], changed


def token_inputs(x, padding_id):
    """A token array (N, L) or pairs (N, 2, L) as the models' input dict."""
    from lra_keras.batching import padding_mask

    return {
        "token_ids": x.astype("int32"),
        "padding_mask": padding_mask(x, padding_id),
    }


# The quick preset's ListOps row generates shorter trees (min_length=10,
# max_depth=4); a run that reads release files unsets those generator
# options, as the loader's error says.
RELEASE_TREES = dict(min_length=None, max_depth=None)
RELEASE_TREES_SET = ["min_length=None", "max_depth=None"]


def write_listops_release(data_dir, rows):
    """60 ListOps rows as the release's `basic_<split>.tsv` files: 40 train,
    10 val, 10 test. Returns `data_dir`."""
    from lra_keras.data import listops

    assert len(rows) == 60
    for split, part in (("train", rows[:40]), ("val", rows[40:50]),
                        ("test", rows[50:])):
        listops.write_tsv(data_dir / f"basic_{split}.tsv", part)
    return data_dir


def assert_causal_reads_no_future(make_layer):
    """`make_layer(x, causal=...)`: the causal layer's first 12 outputs do
    not move when positions 12+ change, its later ones do, and the
    non-causal layer's first ones do too."""
    rng = np.random.default_rng(10)
    x = rng.normal(size=(2, 24, 8)).astype("float32")
    x2 = x.copy()
    x2[:, 12:] = rng.normal(size=(2, 12, 8))
    causal = make_layer(x, causal=True)
    a, b = to_numpy(causal(x)), to_numpy(causal(x2))
    np.testing.assert_allclose(a[:, :12], b[:, :12], atol=1e-5)
    assert not np.allclose(a[:, 12:], b[:, 12:], atol=1e-3)
    both = make_layer(x, causal=False)
    assert not np.allclose(
        to_numpy(both(x))[:, :12], to_numpy(both(x2))[:, :12], atol=1e-3
    )


def padded_sequences(rng):
    """`x` (2, 24, 8) drawn from `rng` and its padding mask: rows of 20
    and 9 real positions, the rest suffix padding."""
    x = rng.normal(size=(2, 24, 8)).astype("float32")
    mask = np.ones((2, 24), bool)
    mask[0, 20:] = False
    mask[1, 9:] = False
    return x, mask


def assert_padding_changes_no_real_position(make_layer):
    """`make_layer(x, causal=False)`: junk at padded positions changes no
    real output, and a padded row equals the unpadded row run alone."""
    rng = np.random.default_rng(11)
    x, mask = padded_sequences(rng)
    junk = x.copy()
    junk[~mask] = rng.normal(size=(int((~mask).sum()), 8)) * 10.0
    layer = make_layer(x, causal=False)
    a = to_numpy(layer(x, padding_mask=mask))
    b = to_numpy(layer(junk, padding_mask=mask))
    np.testing.assert_allclose(a[mask], b[mask], atol=1e-5)
    alone = to_numpy(layer(x[:, :9]))
    np.testing.assert_allclose(a[1, :9], alone[1], atol=1e-5)


class CountBatches(keras.callbacks.Callback):
    """Counts the training batches of the fits it is given to."""

    def __init__(self):
        super().__init__()
        self.batches = 0

    def on_train_batch_end(self, batch, logs=None):
        self.batches += 1


def epoch_rows(out):
    """The rows of a run directory's `metrics.csv`, as dicts of strings."""
    with open(out / "metrics.csv", newline="") as f:
        return list(csv.DictReader(f))
