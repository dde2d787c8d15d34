import keras
import numpy as np
import pytest
from keras import ops

from lra_keras.layers import MaskedBatchNormalization
from lra_keras.layers import SequencePooling
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import to_numpy
from tests.testing import value_and_grads

CHANNELS = 4
GARBAGE = 1e4


def _data(length=6, seed=0):
    """x (3, length, 4) with padding filled with garbage; rows of 6, 4, 1."""
    rng = np.random.default_rng(seed)
    x = (rng.normal(size=(3, length, CHANNELS)) * 2.0 + 0.5).astype("float32")
    lengths = [6, 4, 1]
    mask = np.arange(length)[None, :] < np.array(lengths)[:, None]
    x[~mask] = GARBAGE
    return x, mask


def _more_padding(x, mask, extra=5, seed=1):
    """The same real tokens with `extra` more padded positions of garbage."""
    rng = np.random.default_rng(seed)
    batch, length, channels = x.shape
    x2 = rng.uniform(-GARBAGE, GARBAGE, size=(batch, length + extra, channels))
    x2 = x2.astype("float32")
    x2[:, :length][mask] = x[mask]
    mask2 = np.zeros((batch, length + extra), bool)
    mask2[:, :length] = mask
    return x2, mask2


def _weights(seed=2):
    """Non-trivial gamma, beta, moving_mean, moving_variance."""
    rng = np.random.default_rng(seed)
    gamma = rng.uniform(0.5, 1.5, CHANNELS)
    beta = rng.normal(size=CHANNELS)
    moving_mean = rng.normal(size=CHANNELS)
    moving_variance = rng.uniform(0.5, 2.0, CHANNELS)
    return [w.astype("float32")
            for w in (gamma, beta, moving_mean, moving_variance)]


def _layer(weights=None, **kwargs):
    layer = MaskedBatchNormalization(**kwargs)
    layer.build((None, None, CHANNELS))
    layer.set_weights(weights if weights is not None else _weights())
    return layer


def _moving(layer):
    return (to_numpy(layer.moving_mean), to_numpy(layer.moving_variance))


def numpy_reference(x, mask, weights, momentum=0.9, epsilon=1e-5,
                    unbiased=False):
    """(training output, new moving mean, new moving variance), float64."""
    gamma, beta, moving_mean, moving_variance = (
        np.asarray(w, "float64") for w in weights)
    real = np.asarray(x, "float64")[mask]  # (tokens, channels)
    mean, var = real.mean(0), real.var(0)
    out = gamma * (np.asarray(x, "float64") - mean) / np.sqrt(var + epsilon)
    out = np.where(mask[..., None], out + beta, 0.0)
    n = len(real)
    update_var = var * n / (n - 1) if unbiased else var
    new_mean = momentum * moving_mean + (1 - momentum) * mean
    new_var = momentum * moving_variance + (1 - momentum) * update_var
    return out, new_mean, new_var


def test_padding_changes_neither_outputs_nor_moving_statistics():
    x, mask = _data()
    x2, mask2 = _more_padding(x, mask)
    short, long = _layer(), _layer()
    out = to_numpy(short(x, padding_mask=mask, training=True))
    out2 = to_numpy(long(x2, padding_mask=mask2, training=True))
    np.testing.assert_allclose(out2[:, :6][mask], out[mask],
                               atol=1e-6, rtol=1e-6)
    np.testing.assert_array_equal(out2[~mask2], 0.0)
    np.testing.assert_array_equal(out[~mask], 0.0)
    for a, b in zip(_moving(short), _moving(long)):
        np.testing.assert_allclose(a, b, atol=1e-7, rtol=1e-6)
    # Inference mode too.
    np.testing.assert_allclose(
        to_numpy(long(x2, padding_mask=mask2))[:, :6][mask],
        to_numpy(short(x, padding_mask=mask))[mask], atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("unbiased", [False, True])
def test_training_matches_numpy_and_updates_moving_statistics(unbiased):
    x, mask = _data()
    weights = _weights()
    layer = _layer(weights, momentum=0.8, unbiased_moving_variance=unbiased)
    out = layer(x, padding_mask=mask, training=True)
    ref_out, ref_mean, ref_var = numpy_reference(
        x, mask, weights, momentum=0.8, unbiased=unbiased)
    assert_allclose(out, ref_out, atol=1e-5, rtol=1e-5)
    assert_allclose(layer.moving_mean, ref_mean, atol=1e-6, rtol=1e-6)
    assert_allclose(layer.moving_variance, ref_var, atol=1e-6, rtol=1e-6)
    # Gamma and beta are untouched by the call.
    assert_allclose(layer.gamma, weights[0], atol=0, rtol=0)
    assert_allclose(layer.beta, weights[1], atol=0, rtol=0)


def test_inference_uses_moving_statistics_without_updating_them():
    x, mask = _data()
    weights = _weights()
    gamma, beta, moving_mean, moving_variance = weights
    expected = gamma * (x - moving_mean) / np.sqrt(moving_variance + 1e-5)
    expected = np.where(mask[..., None], expected + beta, 0.0)
    for training in (None, False):
        layer = _layer(weights)
        assert_allclose(layer(x, padding_mask=mask, training=training),
                        expected, atol=1e-5, rtol=1e-5)
        assert_allclose(layer.moving_mean, moving_mean, atol=0, rtol=0)
        assert_allclose(layer.moving_variance, moving_variance, atol=0,
                        rtol=0)
    # A frozen layer runs in inference mode, as keras's BatchNormalization.
    layer = _layer(weights)
    layer.trainable = False
    assert_allclose(layer(x, padding_mask=mask, training=True), expected,
                    atol=1e-5, rtol=1e-5)
    assert_allclose(layer.moving_mean, moving_mean, atol=0, rtol=0)


def test_numeric_mask_and_all_padding_batch():
    x, mask = _data()
    weights = _weights()
    by_bool = _layer(weights)(x, padding_mask=mask, training=True)
    by_int = _layer(weights)(x, padding_mask=mask.astype("int32"),
                             training=True)
    assert_allclose(by_int, by_bool, atol=0, rtol=0)
    # A batch without real tokens: zeros out, moving statistics kept.
    layer = _layer(weights)
    out = layer(x, padding_mask=np.zeros_like(mask), training=True)
    assert_allclose(out, np.zeros_like(x), atol=0, rtol=0)
    assert_allclose(layer.moving_mean, weights[2], atol=0, rtol=0)
    assert_allclose(layer.moving_variance, weights[3], atol=0, rtol=0)


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("batch", [3, 1])
def test_training_gradients_are_autodiffs_of_plain_ops(masked, batch):
    # The layer in training (under PyTorch its written-out
    # `torch_training_normalization`, under JAX `normalize`'s statistics
    # of shape (channels,), elsewhere Keras's ops) against autodiff of
    # the same masked normalisation through plain ops, statistics
    # included: values, the gradients of x, gamma and beta, and the new
    # moving statistics. A batch of one row too, for which JAX's path
    # is written.
    rng = np.random.default_rng(4)
    x = rng.normal(1.5, 2.0, (batch, 7, CHANNELS)).astype("float32")
    weights = _weights()
    w = ops.convert_to_tensor(rng.normal(size=x.shape), "float32")
    keep = np.ones((batch, 7), bool)
    if masked:
        keep[0, 4:] = False
        if batch > 1:
            keep[-1, 1:] = False
    layer = _layer(weights)
    m = ops.convert_to_tensor(keep[..., None].astype("float32"))

    def by_layer(x, gamma, beta):
        out, _ = layer.stateless_call(
            [gamma, beta], layer.non_trainable_variables, x,
            padding_mask=keep if masked else None, training=True)
        return ops.sum(out * w)

    def plain(x, gamma, beta):
        count = ops.sum(m)
        mean = ops.sum(m * x, axis=(0, 1)) / count
        variance = ops.sum(m * ops.square(x - mean), axis=(0, 1)) / count
        y = (x - mean) * ops.rsqrt(variance + 1e-5) * gamma + beta
        return ops.sum(m * y * w)

    got, got_grads = value_and_grads(by_layer, x, *weights[:2])
    want, want_grads = value_and_grads(plain, x, *weights[:2])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    for g, v in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, v, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(got_grads[0][~keep], 0.0)
    layer(x, padding_mask=keep if masked else None, training=True)
    _, new_mean, new_var = numpy_reference(x, keep, weights)
    assert_allclose(layer.moving_mean, new_mean, rtol=1e-5, atol=1e-6)
    assert_allclose(layer.moving_variance, new_var, rtol=1e-5, atol=1e-6)


def test_padded_inputs_get_no_gradient():
    x, mask = _data()
    layer = _layer()
    w = np.random.default_rng(3).normal(size=x.shape).astype("float32")

    def loss(inputs):
        out, _ = layer.stateless_call(
            layer.trainable_variables, layer.non_trainable_variables,
            inputs, padding_mask=mask, training=True)
        return keras.ops.sum(out * keras.ops.convert_to_tensor(w))

    value, (grad,) = value_and_grads(loss, x)
    assert np.isfinite(value)
    np.testing.assert_array_equal(grad[~mask], 0.0)
    assert np.all(np.isfinite(grad)) and np.any(grad[mask] != 0)
    if keras.backend.backend() != "torch":
        # Through the ops (JAX, TensorFlow) an inf in the padding makes
        # the variance's gradient 0 x inf: NaN (the statistics and the
        # outputs stay right). Masking the inputs first made the JAX RTF
        # step 4-45% slower, so only the written-out backward is held to
        # it.
        return
    # whatever the padding holds: the same loss and gradients
    x[~mask] = np.inf
    x[np.argwhere(~mask)[0][0], np.argwhere(~mask)[0][1], 0] = np.nan
    again, (grad_again,) = value_and_grads(loss, x)
    np.testing.assert_array_equal(again, value)
    np.testing.assert_array_equal(grad_again, grad)


@pytest.mark.parametrize("unbiased", [False, True])
def test_count_padding_is_the_references_unmasked_batch_norm(unbiased):
    # The S4 code's BatchNorm1d (unbiased) and S5's flax BatchNorm see no
    # mask: statistics over every position, padded ones normalised too;
    # with count_padding the mask changes nothing.
    rng = np.random.default_rng(5)
    x = (rng.normal(size=(3, 6, CHANNELS)) * 2.0 + 0.5).astype("float32")
    _, mask = _data()
    weights = _weights()
    everywhere = np.ones(mask.shape, bool)
    ref_out, ref_mean, ref_var = numpy_reference(
        x, everywhere, weights, momentum=0.8, unbiased=unbiased)
    for padding_mask in (mask, None):
        layer = _layer(weights, momentum=0.8, count_padding=True,
                       unbiased_moving_variance=unbiased)
        out = to_numpy(layer(x, padding_mask=padding_mask, training=True))
        assert_allclose(out, ref_out, atol=1e-5, rtol=1e-5)
        assert np.all(out[~mask] != 0)
        assert_allclose(layer.moving_mean, ref_mean, atol=1e-6, rtol=1e-6)
        assert_allclose(layer.moving_variance, ref_var, atol=1e-6,
                        rtol=1e-6)
    # Against the masked layer: the real tokens' statistics differ.
    masked = _layer(weights, momentum=0.8, unbiased_moving_variance=unbiased)
    masked(x, padding_mask=mask, training=True)
    assert not np.allclose(_moving(masked)[0], ref_mean, atol=1e-3)


@pytest.mark.parametrize("unbiased", [False, True])
def test_count_padding_longest_is_the_batch_padded_to_its_longest_row(
        unbiased):
    # The S4 code pads each batch to its longest row (`pad_sequence`) and
    # its BatchNorm counts that padding. "longest" on the same batch fed
    # with 5 more padded columns (or 5 + 2 all-padding rows' worth) is
    # count_padding=True on the batch cut at its longest row.
    rng = np.random.default_rng(6)
    x = (rng.normal(size=(3, 6, CHANNELS)) * 2.0 + 0.5).astype("float32")
    _, mask = _data()  # rows of 6, 4, 1: the longest is 6
    x2, mask2 = _more_padding(x, mask)
    x2[:, :6] = x  # the padding up to the longest row as it was
    weights = _weights()
    ref_out, ref_mean, ref_var = numpy_reference(
        x, np.ones(mask.shape, bool), weights, momentum=0.8,
        unbiased=unbiased)
    layer = _layer(weights, momentum=0.8, count_padding="longest",
                   unbiased_moving_variance=unbiased)
    out = to_numpy(layer(x2, padding_mask=mask2, training=True))
    assert_allclose(out[:, :6], ref_out, atol=1e-5, rtol=1e-5)
    np.testing.assert_array_equal(out[:, 6:], 0.0)  # after the batch's end
    assert_allclose(layer.moving_mean, ref_mean, atol=1e-6, rtol=1e-6)
    assert_allclose(layer.moving_variance, ref_var, atol=1e-6, rtol=1e-6)
    # The same layer on the cut batch: "longest" is then every position.
    cut = _layer(weights, momentum=0.8, count_padding="longest",
                 unbiased_moving_variance=unbiased)
    assert_allclose(cut(x, padding_mask=mask, training=True), ref_out,
                    atol=1e-5, rtol=1e-5)
    # Inference normalises the positions up to the longest row with the
    # moving statistics, and zeroes the rest.
    out = to_numpy(layer(x2, padding_mask=mask2, training=False))
    gamma, beta = weights[:2]
    expected = (gamma * (x - to_numpy(layer.moving_mean))
                / np.sqrt(to_numpy(layer.moving_variance) + 1e-5) + beta)
    assert_allclose(out[:, :6], expected, atol=1e-5, rtol=1e-5)
    np.testing.assert_array_equal(out[:, 6:], 0.0)


def test_up_to_longest_row_ends_at_the_last_real_position():
    from lra_keras.layers.masked_batch_normalization import up_to_longest_row

    mask = np.array([[1, 1, 0, 0, 0, 0],
                     [1, 0, 1, 1, 0, 0],  # a hole: still before the end
                     [0, 0, 0, 0, 0, 0]], bool)
    expected = np.broadcast_to(np.arange(6) < 4, mask.shape)
    np.testing.assert_array_equal(to_numpy(up_to_longest_row(mask)),
                                  expected)
    none = np.zeros((2, 3), bool)
    np.testing.assert_array_equal(to_numpy(up_to_longest_row(none)), none)
    # A batch with no real token at all keeps its moving statistics.
    layer = _layer(count_padding="longest")
    before = _moving(layer)
    x = np.ones((2, 3, CHANNELS), "float32")
    out = to_numpy(layer(x, padding_mask=none, training=True))
    np.testing.assert_array_equal(out, 0.0)
    for a, b in zip(_moving(layer), before):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("momentum,epsilon,batch",
                         [(0.9, 1e-5, 3), (0.5, 1e-3, 3), (0.9, 1e-5, 1)])
def test_without_mask_equals_keras_batch_normalization(momentum, epsilon,
                                                       batch):
    x = np.random.default_rng(4).normal(size=(batch, 7, CHANNELS))
    x = (x * 3.0 + 1.0).astype("float32")
    weights = _weights()
    ours = _layer(weights, momentum=momentum, epsilon=epsilon)
    theirs = keras.layers.BatchNormalization(axis=-1, momentum=momentum,
                                             epsilon=epsilon)
    theirs.build((None, None, CHANNELS))
    theirs.set_weights(weights)
    for training in (True, False, True):
        assert_allclose(ours(x, training=training),
                        theirs(x, training=training), atol=1e-6, rtol=1e-6)
        for a, b in zip(_moving(ours), _moving(theirs)):
            np.testing.assert_allclose(a, b, atol=1e-7, rtol=1e-7)


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_mixed_precision(policy):
    x, mask = _data()
    x = np.where(mask[..., None], x, 100.0).astype("float32")
    weights = _weights()
    layer = _layer(weights, dtype=policy)
    assert layer.moving_mean.dtype == "float32"
    assert layer.gamma.dtype == "float32"
    out = layer(x, padding_mask=mask, training=True)
    assert keras.backend.standardize_dtype(out.dtype) == policy[6:]
    # Statistics of the inputs as cast to the compute dtype, in float32.
    rounded = to_numpy(keras.ops.cast(keras.ops.cast(x, policy[6:]),
                                      "float32"))
    ref_out, ref_mean, ref_var = numpy_reference(rounded, mask, weights)
    assert_allclose(layer.moving_mean, ref_mean, atol=1e-6, rtol=1e-5)
    assert_allclose(layer.moving_variance, ref_var, atol=1e-6, rtol=1e-5)
    tolerance = 1e-2 if policy == "mixed_bfloat16" else 2e-3
    assert_allclose(keras.ops.cast(out, "float32"), ref_out,
                    atol=tolerance, rtol=tolerance)


def _fit_model(length, policy=None):
    inputs = {"x": keras.Input((length, CHANNELS), name="x"),
              "mask": keras.Input((length,), dtype="bool", name="mask")}
    norm = MaskedBatchNormalization(name="norm", dtype=policy)
    h = norm(inputs["x"], padding_mask=inputs["mask"])
    h = SequencePooling("mean")(h, padding_mask=inputs["mask"])
    outputs = keras.layers.Dense(1, name="head")(h)
    return keras.Model(inputs, outputs), norm


@pytest.mark.parametrize("policy", [None, "mixed_float16"])
def test_fit_updates_moving_statistics(policy):
    x, mask = _data(length=8)
    y = np.random.default_rng(5).normal(size=(3, 1)).astype("float32")
    model, norm = _fit_model(8, policy)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    before = [np.array(w) for w in norm.get_weights()]
    model.fit({"x": x, "mask": mask}, y, batch_size=len(x), epochs=2,
              shuffle=False, verbose=0)
    after = norm.get_weights()
    # Gamma and beta trained; the moving statistics follow the momentum
    # update on the real tokens, twice (the first layer sees the data).
    assert not np.allclose(after[0], before[0])
    assert not np.allclose(after[1], before[1])
    x_seen = x
    if policy is not None:
        x_seen = to_numpy(keras.ops.cast(keras.ops.cast(x, "float16"),
                                         "float32"))
    real = x_seen.astype("float64")[mask]
    mean, var = real.mean(0), real.var(0)
    moving_mean, moving_variance = before[2], before[3]
    for _ in range(2):
        moving_mean = 0.9 * moving_mean + 0.1 * mean
        moving_variance = 0.9 * moving_variance + 0.1 * var
    assert not np.allclose(after[2], before[2])
    np.testing.assert_allclose(after[2], moving_mean, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(after[3], moving_variance, atol=1e-5,
                               rtol=1e-5)
    # Inference after fit uses those statistics and ignores padding.
    x2, mask2 = _more_padding(x[:, :6], mask[:, :6], extra=2)
    np.testing.assert_allclose(
        to_numpy(model.predict({"x": x2, "mask": mask2}, verbose=0)),
        to_numpy(model.predict({"x": x, "mask": mask}, verbose=0)),
        atol=1e-5, rtol=1e-5)


def test_round_trips(tmp_path):
    layer = MaskedBatchNormalization(
        momentum=0.95, epsilon=1e-3, center=False,
        unbiased_moving_variance=True, gamma_regularizer="l2",
        count_padding=True, name="norm")
    rebuilt = assert_config_round_trip(layer)
    assert rebuilt.momentum == 0.95 and rebuilt.epsilon == 1e-3
    assert rebuilt.center is False and rebuilt.unbiased_moving_variance
    assert rebuilt.count_padding is True
    longest = MaskedBatchNormalization(count_padding="longest")
    assert assert_config_round_trip(longest).count_padding == "longest"

    x, mask = _data()
    inputs = {"x": keras.Input((6, CHANNELS), name="x"),
              "m": keras.Input((6,), dtype="bool", name="m")}
    norm = MaskedBatchNormalization(name="norm")
    model = keras.Model(inputs, norm(inputs["x"], padding_mask=inputs["m"]))
    norm.set_weights(_weights())
    loaded = assert_saving_round_trip(model, {"x": x, "m": mask}, tmp_path)
    for a, b in zip(loaded.get_layer("norm").get_weights(), _weights()):
        np.testing.assert_array_equal(a, b)
    assert [v.name for v in loaded.get_layer("norm").non_trainable_weights] \
        == ["moving_mean", "moving_variance"]


@pytest.mark.parametrize("kwargs,match", [
    ({"momentum": 1.5}, "momentum"),
    ({"momentum": "0.9"}, "momentum"),
    ({"epsilon": 0.0}, "epsilon"),
    ({"center": 1}, "center"),
    ({"scale": None}, "scale"),
    ({"unbiased_moving_variance": "yes"}, "unbiased_moving_variance"),
    ({"count_padding": 1}, "count_padding"),
    ({"count_padding": "all"}, "count_padding"),
    ({"count_padding": None}, "count_padding"),
])
def test_bad_arguments_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=f"Received: {match}"):
        MaskedBatchNormalization(**kwargs)


def test_bad_input_rank_is_rejected():
    with pytest.raises(ValueError, match="Received: input_shape"):
        MaskedBatchNormalization()(np.zeros((2, 3), "float32"))
